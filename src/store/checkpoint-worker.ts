/**
 * Worker thread of store/checkpointer.ts: its own connection to the database
 * file, running a PASSIVE WAL checkpoint every `everyMs`. PASSIVE never waits
 * for or blocks the server's writers; it copies what it can.
 */
import { Database } from 'bun:sqlite'

declare const self: Worker

export interface CheckpointWorkerStart {
  path: string
  everyMs: number
  busyTimeoutMs: number
}

let stop: (() => void) | undefined

self.onmessage = (event: MessageEvent<CheckpointWorkerStart | 'stop'>) => {
  if (event.data === 'stop') {
    stop?.()
    process.exit(0)
  }
  const { path, everyMs, busyTimeoutMs } = event.data
  const db = new Database(path)
  db.run(`PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMs)}`)
  const checkpoint = db.prepare<{ busy: number; log: number; checkpointed: number }, []>('PRAGMA wal_checkpoint(PASSIVE)')
  const timer = setInterval(() => {
    try {
      postMessage({ ok: true, ...checkpoint.get() })
    } catch (err) {
      postMessage({ ok: false, error: err instanceof Error ? err.message : String(err) })
    }
  }, everyMs)
  stop = () => {
    clearInterval(timer)
    db.close()
  }
}
