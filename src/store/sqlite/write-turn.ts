/**
 * Whose turn it is to write to the WAL: the request thread's group commit or the
 * checkpoint worker's final catch-up. One Int32 in shared memory, taken by
 * compare-and-swap, so the request thread never sleeps for it. SQLite restarts
 * the WAL only when a writer begins with every frame copied back, which a
 * checkpoint beside a busy writer never reaches; the worker takes the turn
 * between two batches to copy the last frames (docs/benchmarks.md#the-wal-and-its-checkpoints).
 * Advisory between these two threads only: SQLite's locks keep every transaction correct.
 */
export const TURN_FREE = 0
export const TURN_SERVER = 1
export const TURN_CHECKPOINT = 2
/** Cells: the turn, and whether the worker sleeps waiting for it (the request thread then wakes it). */
const TURN = 0
const WORKER_WAITS = 1

export class WriteTurn {
  readonly cell: Int32Array
  readonly buffer = new SharedArrayBuffer(8)
  private waiting: (() => void)[] = []
  private stuckTimer: ReturnType<typeof setTimeout> | undefined

  /** `stuckMs`: a worker that holds the turn longer is taken to be stuck, and the turn is taken back. */
  constructor(private readonly stuckMs: number) {
    this.cell = new Int32Array(this.buffer)
  }

  /** Request thread: takes the turn, unless the checkpoint worker holds it. */
  take(): boolean {
    return Atomics.compareExchange(this.cell, TURN, TURN_FREE, TURN_SERVER) === TURN_FREE
  }

  /**
   * Request thread: gives the turn back, and wakes the worker if it sleeps
   * waiting for it (a wake costs several microseconds; it is rarely needed).
   */
  give(): void {
    Atomics.store(this.cell, TURN, TURN_FREE)
    if (Atomics.load(this.cell, WORKER_WAITS) === 1) Atomics.notify(this.cell, TURN)
  }

  /** Request thread: runs `fn` once the worker reports it gave the turn back. */
  whenFree(fn: () => void): void {
    this.waiting.push(fn)
    // A worker that died or hangs holding the turn must not stop every write:
    // the turn only orders two threads, SQLite's locks keep the data correct.
    this.stuckTimer ??= setTimeout(() => {
      Atomics.store(this.cell, TURN, TURN_FREE)
      this.freed()
    }, this.stuckMs)
  }

  /** Called when the worker's "turn given back" message arrives. */
  freed(): void {
    clearTimeout(this.stuckTimer)
    this.stuckTimer = undefined
    const waiting = this.waiting
    this.waiting = []
    for (const fn of waiting) fn()
  }
}

/**
 * Worker thread: waits up to `timeoutMs` for the request thread to finish its
 * batch, then takes the turn. False when the turn did not come in time.
 */
export function takeTurnForCheckpoint(cell: Int32Array, timeoutMs: number): boolean {
  const deadline = performance.now() + timeoutMs
  try {
    for (;;) {
      const seen = Atomics.compareExchange(cell, TURN, TURN_FREE, TURN_CHECKPOINT)
      if (seen === TURN_FREE) return true
      const left = deadline - performance.now()
      if (left <= 0) return false
      // Announce the sleep, then look again: a turn given back in between is
      // seen here, and one given back later finds the announcement and wakes us.
      Atomics.store(cell, WORKER_WAITS, 1)
      if (Atomics.load(cell, TURN) === seen) Atomics.wait(cell, TURN, seen, left)
    }
  } finally {
    Atomics.store(cell, WORKER_WAITS, 0)
  }
}

/** Worker thread: gives the turn back (the caller then posts its "freed" message). */
export function giveTurnBack(cell: Int32Array): void {
  Atomics.store(cell, TURN, TURN_FREE)
}
