/**
 * Whose turn it is to write to the WAL: the request thread's group commit or
 * the checkpoint worker's final catch-up. One Int32 in shared memory, taken
 * with a compare-and-swap, so the request thread never sleeps for it: when
 * the worker holds the turn, the batch waits for a message instead, and the
 * event loop goes on reading requests meanwhile.
 *
 * Why it exists: SQLite restarts the WAL from its beginning only when a
 * writer starts a transaction while every frame has been copied back to the
 * database file. A checkpoint running beside a busy writer never gets there
 * (the writer appends faster than it copies), so the WAL would grow until the
 * server connection's own auto-checkpoint ran inside a COMMIT on the request
 * thread, fsyncs included, again and again (measured: 16 COMMITs in a row
 * taking 11-71 ms). With the turn, the worker copies most frames while the
 * server writes, then takes the turn between two batches to copy the last
 * few, and the server's next batch restarts the WAL.
 *
 * The turn is advisory between these two threads only: SQLite's own locks
 * keep every transaction correct whoever holds it (other processes, such as
 * the CLI, never take it).
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
