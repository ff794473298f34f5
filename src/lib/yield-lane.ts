/**
 * Bulk work that gives way to the rest of the event loop. A caller takes a
 * turn before its heavy part; in one turn of the loop at most `perTurn`
 * callers go on, and the rest wait, in order, for later turns (setImmediate),
 * so requests read in between (a verify) do not queue behind a whole wave of
 * it (docs/benchmarks.md#slow-providers). Counted, not timed: what a caller
 * goes on to do runs in later microtasks, past any clock read here.
 */
export class YieldLane {
  /** Callers let go in this turn. */
  private used = 0
  private readonly waiting: (() => void)[] = []
  private scheduled = false

  constructor(private readonly perTurn: number) {}

  /** Whether callers went on in this turn or wait: a wave under way, which later callers join. */
  get active(): boolean {
    return this.used > 0 || this.waiting.length > 0
  }

  /** Undefined: go on now. Else a promise that resolves in a later turn. */
  turn(): Promise<void> | undefined {
    if (this.waiting.length === 0 && this.used < this.perTurn) {
      this.used++
      this.schedule()
      return undefined
    }
    const p = new Promise<void>((resolve) => this.waiting.push(resolve))
    this.schedule()
    return p
  }

  private schedule(): void {
    if (this.scheduled) return
    this.scheduled = true
    setImmediate(this.nextTurn)
  }

  /** A new turn: lets the next `perTurn` waiting callers go on. */
  private readonly nextTurn = () => {
    this.scheduled = false
    const go = this.waiting.splice(0, this.perTurn)
    this.used = go.length
    for (const resolve of go) resolve()
    // The count of this turn is reset at the next one; an idle lane schedules nothing.
    if (this.used > 0) this.schedule()
  }
}
