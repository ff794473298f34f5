/**
 * Durable commits without blocking the event loop. Under synchronous = FULL,
 * SQLite fsyncs the WAL inside every COMMIT, on the request thread; instead the
 * server commits with NORMAL and a worker thread flushes the WAL file
 * (store/sqlite/checkpoint-worker.ts), and the group commit answers a batch
 * only once a flush that started after its COMMIT returned: as durable as FULL,
 * while the next batch is served. Calls share generations in shared memory,
 * so the worker starts the next flush without waiting for this thread.
 */
import { SYNC_REQUESTED, SYNC_SLEEPING, SYNC_STOP } from './wal-protocol.ts'
import { stopWorker, walWorkerSpecifier } from './wal-worker.ts'

export interface WalSync {
  /** Resolves after a flush of the WAL that started after this call. */
  sync(): Promise<void>
  stop(): Promise<void>
}

/** Whether generation `done` covers `gen` (generations wrap around at 2^31). */
export const covers = (done: number, gen: number) => ((done - gen) | 0) >= 0

/**
 * `onFlush` hears how long each flush took (ms): the one step of a durable
 * commit that waits for the disk (the `otpd_wal_flush_seconds` metric).
 */
export function startWalSync(dbPath: string, onError: (message: string) => void, onFlush?: (ms: number) => void): WalSync {
  const cells = new Int32Array(new SharedArrayBuffer(12))
  const worker = new Worker(walWorkerSpecifier())
  let requested = 0
  // In generation order: each call gets the generation after the last.
  const waiting: { gen: number; resolve: () => void; reject: (e: Error) => void }[] = []
  const settle = (upTo: number, err?: Error) => {
    let n = 0
    while (n < waiting.length && covers(upTo, waiting[n]!.gen)) n++
    for (const w of waiting.splice(0, n)) {
      if (err) w.reject(err)
      else w.resolve()
    }
  }
  worker.onmessage = (event: MessageEvent<{ ok: boolean; upTo: number; ms?: number; error?: string }>) => {
    if (event.data.ok) {
      if (event.data.ms !== undefined) onFlush?.(event.data.ms)
      return settle(event.data.upTo)
    }
    onError(event.data.error ?? 'unknown error')
    settle(event.data.upTo, new Error(`WAL fsync failed: ${event.data.error}`))
  }
  worker.onerror = (event) => {
    onError(event.message)
    settle(requested, new Error(`WAL fsync worker failed: ${event.message}`))
  }
  worker.postMessage({ role: 'sync', walPath: `${dbPath}-wal`, cells: cells.buffer })
  worker.unref()
  return {
    sync: () =>
      new Promise<void>((resolve, reject) => {
        requested = (requested + 1) | 0
        waiting.push({ gen: requested, resolve, reject })
        Atomics.store(cells, SYNC_REQUESTED, requested)
        // A wake costs several microseconds: only when the worker sleeps (it announces it first).
        if (Atomics.load(cells, SYNC_SLEEPING) === 1) Atomics.notify(cells, SYNC_REQUESTED)
      }),
    stop: () => {
      Atomics.store(cells, SYNC_STOP, 1)
      Atomics.notify(cells, SYNC_REQUESTED)
      return stopWorker(worker)
    },
  }
}
