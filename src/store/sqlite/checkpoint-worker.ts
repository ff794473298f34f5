/**
 * Worker thread for the WAL, off the event loop (store/sqlite/checkpointer.ts
 * and store/sqlite/wal-sync.ts start one each):
 * - `checkpoint`: its own connection, a PASSIVE checkpoint every `everyMs` (it
 *   never waits for or blocks the server's writers), and from `restartFrames`
 *   on, the catch-up that lets the WAL restart;
 * - `sync`: fdatasync the WAL file whenever the server publishes a newer commit
 *   generation, and report what it covered (docs/benchmarks.md#the-wal-and-its-checkpoints).
 */
import { Database, type Statement } from 'bun:sqlite'
import { closeSync, fdatasyncSync, openSync } from 'node:fs'
import { fileSize } from './health.ts'
import { SYNC_REQUESTED, SYNC_SLEEPING, SYNC_STOP, type WalWorkerStart } from './wal-protocol.ts'
import { giveTurnBack, takeTurnForCheckpoint } from './write-turn.ts'

declare const self: Worker

/** At most this many passes before taking the turn... */
const CATCH_UP_PASSES = 4
/** ...or fewer once a pass found at most this many new frames. */
const CAUGHT_UP_FRAMES = 200

type CheckpointResult = { busy: number; log: number; checkpointed: number }
type CheckpointStart = Extract<WalWorkerStart, { role: 'checkpoint' }>

let stop: (() => void) | undefined

const report = (err: unknown) => postMessage({ ok: false, error: err instanceof Error ? err.message : String(err) })

self.onmessage = (event: MessageEvent<WalWorkerStart | 'stop'>) => {
  const m = event.data
  if (m === 'stop') {
    stop?.()
    process.exit(0)
  }
  if (m.role === 'sync') return flushLoop(m.walPath, new Int32Array(m.cells))
  try {
    const db = new Database(m.path)
    db.run(`PRAGMA busy_timeout = ${Math.trunc(m.busyTimeoutMs)}`)
    const pass = db.prepare<CheckpointResult, []>('PRAGMA wal_checkpoint(PASSIVE)')
    const dbFd = openSync(m.path, 'r')
    const idle = idleTruncation(db, `${m.path}-wal`, m)
    const turn = new Int32Array(m.turn)
    const run = () => {
      const r = pass.get()!
      return idle(r, turn) ?? checkpoint(pass, dbFd, turn, m, r)
    }
    const timer = setInterval(() => {
      try {
        postMessage({ ok: true, ...run() })
      } catch (err) {
        report(err)
      }
    }, m.everyMs)
    stop = () => {
      clearInterval(timer)
      closeSync(dbFd)
      db.close()
    }
  } catch (err) {
    report(err)
  }
}

/**
 * The `sync` role (store/sqlite/wal-sync.ts): flush the WAL whenever the server has
 * published a generation newer than the last flushed, until told to stop.
 * Runs in this thread's only task: the stop comes through shared memory.
 */
function flushLoop(walPath: string, cells: Int32Array): void {
  let flush: () => void
  try {
    // The flush covers the file whichever descriptor wrote it.
    const fd = openSync(walPath, 'r')
    flush = () => fdatasyncSync(fd)
    stop = () => closeSync(fd)
  } catch (err) {
    flush = () => {
      throw err
    }
  }
  let flushed = 0
  while (Atomics.load(cells, SYNC_STOP) === 0) {
    const requested = Atomics.load(cells, SYNC_REQUESTED)
    if (requested === flushed) {
      // Announce the sleep, then look again (store/sqlite/write-turn.ts does the same).
      Atomics.store(cells, SYNC_SLEEPING, 1)
      if (Atomics.load(cells, SYNC_REQUESTED) === flushed) Atomics.wait(cells, SYNC_REQUESTED, flushed)
      Atomics.store(cells, SYNC_SLEEPING, 0)
      continue
    }
    try {
      const started = performance.now()
      flush()
      postMessage({ ok: true, upTo: requested, ms: performance.now() - started })
    } catch (err) {
      postMessage({ ok: false, upTo: requested, error: err instanceof Error ? err.message : String(err) })
    }
    flushed = requested
  }
}

/**
 * One PASSIVE checkpoint; and once the WAL holds `restartFrames`, the catch-up
 * that lets it restart (store/sqlite/write-turn.ts). Passes copy what the server
 * wrote during the pass before, with the database file flushed here between
 * them (SQLite fsyncs it only when a pass reaches the WAL's end, which never
 * happens while the server writes), so the last pass, made holding the
 * turn while the server's next batch waits, has little to copy and to sync.
 * `held_ms`: how long the server waited.
 */
function checkpoint(pass: Statement<CheckpointResult, []>, dbFd: number, turn: Int32Array, m: CheckpointStart, first: CheckpointResult) {
  let r = first
  if (r.log < m.restartFrames) return { ...r, restarted: false }
  for (let i = 0; i < CATCH_UP_PASSES; i++) {
    fdatasyncSync(dbFd)
    const before = r.log
    r = pass.get()!
    if (r.log - before <= CAUGHT_UP_FRAMES) break
  }
  fdatasyncSync(dbFd)
  const last = holdingTurn(turn, m.turnWaitMs, () => pass.get()!)
  if (!last) return { ...r, restarted: false }
  r = last.result
  // All copied with no writer in between: the server's next transaction starts the WAL over.
  return { ...r, restarted: r.busy === 0 && r.checkpointed === r.log, held_ms: last.heldMs }
}

/**
 * Runs `fn` holding the server's write turn, then gives it back and tells the
 * request thread; undefined when the turn did not come within `waitMs`.
 * `heldMs`: how long the server's writes waited.
 */
function holdingTurn<T>(turn: Int32Array, waitMs: number, fn: () => T): { result: T; heldMs: number } | undefined {
  if (!takeTurnForCheckpoint(turn, waitMs)) return undefined
  const took = performance.now()
  try {
    return { result: fn(), heldMs: performance.now() - took }
  } finally {
    giveTurnBack(turn)
    postMessage({ freed: true })
  }
}

/**
 * Shrinks the WAL file (restarted, it keeps its 150-200 MB) once the writes stop:
 * past `keepWalBytes`, after `idlePasses` passes in a row that saw no other
 * connection's commit (`PRAGMA data_version`) or a small WAL in use; truncating
 * under load would only regrow it, a journal commit per growth. The TRUNCATE
 * takes the write turn with busy timeout 0, giving way at once to another
 * process. Returns the report when it truncated or tried to.
 */
function idleTruncation(db: Database, walPath: string, m: CheckpointStart) {
  const version = db.prepare<{ data_version: number }, []>('PRAGMA data_version')
  const truncate = db.prepare<CheckpointResult, []>('PRAGMA wal_checkpoint(TRUNCATE)')
  // A WAL frame is a page and a 24-byte header; the file starts with a 32-byte header.
  const frameBytes = db.query<{ page_size: number }, []>('PRAGMA page_size').get()!.page_size + 24
  let lastVersion = -1
  let quiet = 0
  return (r: CheckpointResult, turn: Int32Array) => {
    const v = version.get()!.data_version
    const small = 32 + r.log * frameBytes <= m.keepWalBytes
    quiet = v === lastVersion || small ? quiet + 1 : 0
    lastVersion = v
    if (quiet < m.idlePasses || fileSize(walPath) <= m.keepWalBytes) return undefined
    quiet = 0
    const held = holdingTurn(turn, m.turnWaitMs, () => {
      db.run('PRAGMA busy_timeout = 0')
      try {
        return truncate.get()!
      } finally {
        db.run(`PRAGMA busy_timeout = ${Math.trunc(m.busyTimeoutMs)}`)
      }
    })
    if (!held) return { ...r, restarted: false, truncated: false }
    return { ...held.result, restarted: false, truncated: held.result.busy === 0, held_ms: held.heldMs }
  }
}
