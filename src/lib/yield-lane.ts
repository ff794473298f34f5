/**
 * Bulk work that gives way to the rest of the event loop. A caller takes a
 * turn before its heavy part; within one turn of the loop at most `budgetMs`
 * of such work starts, and the rest waits for later turns (setImmediate), so
 * requests read in between (a verify) do not queue behind a whole wave of it
 * (docs/benchmarks.md#slow-providers).
 */
export class YieldLane {
  /** When this turn's first caller went on; -1 before one has. */
  private since = -1
  private readonly waiting: (() => void)[] = []
  private pumping = false

  constructor(private readonly budgetMs: number) {}

  /** Undefined: go on now, which costs one clock read. Else a promise that resolves in a later turn. */
  turn(): Promise<void> | undefined {
    if (!this.pumping) {
      const now = performance.now()
      if (this.since < 0) {
        this.since = now
        setImmediate(this.endTurn)
        return undefined
      }
      if (now - this.since < this.budgetMs) return undefined
      this.pumping = true
      setImmediate(this.pump)
    }
    return new Promise<void>((resolve) => this.waiting.push(resolve))
  }

  private readonly endTurn = () => {
    if (!this.pumping) this.since = -1
  }

  /** Lets waiting callers go on, in order, for up to `budgetMs` per turn. */
  private readonly pump = async () => {
    const start = performance.now()
    while (this.waiting.length > 0 && performance.now() - start < this.budgetMs) {
      this.waiting.shift()!()
      // The caller just let go runs up to its next real wait before the clock is read again.
      await null
      await null
    }
    if (this.waiting.length > 0) {
      setImmediate(this.pump)
      return
    }
    this.pumping = false
    this.since = -1
  }
}
