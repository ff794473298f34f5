/**
 * Durable commits without blocking the event loop. With synchronous = FULL,
 * SQLite fsyncs the WAL inside every COMMIT, on the thread that serves
 * requests: nothing else runs for the length of the fsync. The server instead
 * commits with NORMAL (the WAL is written, not synced) and asks a worker thread
 * to flush the WAL file (fdatasync, store/checkpoint-worker.ts); the group commit (store/transactor.ts) answers a
 * batch only once an fsync that started after its COMMIT has returned. An
 * acknowledged write therefore survives power loss exactly as under FULL,
 * while the next batch is already being served. Sync requests that arrive
 * while an fsync runs share the next one.
 */
import { stopWorker, walWorkerSpecifier } from './checkpointer.ts'

export interface WalSync {
  /** Resolves after an fsync of the WAL that started after this call. */
  sync(): Promise<void>
  stop(): Promise<void>
}

export function startWalSync(dbPath: string, onError: (message: string) => void): WalSync {
  const worker = new Worker(walWorkerSpecifier())
  let waiting: { resolve: () => void; reject: (e: Error) => void }[] = []
  let inFlight: typeof waiting | null = null
  const start = () => {
    inFlight = waiting
    waiting = []
    worker.postMessage('sync')
  }
  worker.onmessage = (event: MessageEvent<{ ok: boolean; error?: string }>) => {
    const done = inFlight ?? []
    inFlight = null
    if (event.data.ok) for (const w of done) w.resolve()
    else {
      onError(event.data.error ?? 'unknown error')
      for (const w of done) w.reject(new Error(`WAL fsync failed: ${event.data.error}`))
    }
    if (waiting.length > 0) start()
  }
  worker.onerror = (event) => {
    onError(event.message)
    for (const w of [...(inFlight ?? []), ...waiting]) w.reject(new Error(`WAL fsync worker failed: ${event.message}`))
    inFlight = null
    waiting = []
  }
  worker.postMessage({ role: 'sync', walPath: `${dbPath}-wal` })
  worker.unref()
  return {
    sync: () =>
      new Promise<void>((resolve, reject) => {
        waiting.push({ resolve, reject })
        if (inFlight === null) start()
      }),
    stop: () => stopWorker(worker),
  }
}
