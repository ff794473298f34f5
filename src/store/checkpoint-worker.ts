/**
 * Worker thread for the WAL, off the event loop (store/checkpointer.ts and
 * store/wal-sync.ts start one each):
 * - `checkpoint`: its own connection, a PASSIVE checkpoint every `everyMs`
 *   (PASSIVE never waits for or blocks the server's writers);
 * - `sync`: on each 'sync' message, fsync the WAL file, then answer 'synced'.
 */
import { Database } from 'bun:sqlite'
import { closeSync, fsyncSync, openSync } from 'node:fs'

declare const self: Worker

export type WalWorkerStart =
  | { role: 'checkpoint'; path: string; everyMs: number; busyTimeoutMs: number }
  | { role: 'sync'; walPath: string }

let stop: (() => void) | undefined
let sync: (() => void) | undefined

const report = (err: unknown) => postMessage({ ok: false, error: err instanceof Error ? err.message : String(err) })

self.onmessage = (event: MessageEvent<WalWorkerStart | 'stop' | 'sync'>) => {
  const m = event.data
  if (m === 'stop') {
    stop?.()
    process.exit(0)
  }
  if (m === 'sync') {
    try {
      sync!()
      postMessage({ ok: true, synced: true })
    } catch (err) {
      report(err)
    }
    return
  }
  try {
    if (m.role === 'sync') {
      // fsync flushes the file whichever descriptor wrote it.
      const fd = openSync(m.walPath, 'r')
      sync = () => fsyncSync(fd)
      stop = () => closeSync(fd)
      return
    }
    const db = new Database(m.path)
    db.run(`PRAGMA busy_timeout = ${Math.trunc(m.busyTimeoutMs)}`)
    const checkpoint = db.prepare<{ busy: number; log: number; checkpointed: number }, []>('PRAGMA wal_checkpoint(PASSIVE)')
    const timer = setInterval(() => {
      try {
        postMessage({ ok: true, ...checkpoint.get() })
      } catch (err) {
        report(err)
      }
    }, m.everyMs)
    stop = () => {
      clearInterval(timer)
      db.close()
    }
  } catch (err) {
    report(err)
  }
}
