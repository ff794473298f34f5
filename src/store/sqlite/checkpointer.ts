/**
 * WAL checkpoints off the event loop: SQLite's auto-checkpoint would run inside
 * some request's COMMIT, on the only thread that serves requests. A worker with
 * its own connection checkpoints every CHECKPOINT_EVERY_MS (the server's own
 * auto-checkpoint raised to BACKSTOP_PAGES, in case the worker falls behind),
 * takes the write turn from RESTART_FRAMES on so the WAL starts over
 * (store/sqlite/write-turn.ts), and truncates a WAL file over KEEP_WAL_BYTES
 * once the writes stop for IDLE_MS. Durability is unchanged: a commit is
 * durable once in the WAL.
 */
import type { Db } from './db.ts'
import type { WalWorkerStart } from './wal-protocol.ts'
import { stopWorker, walWorkerSpecifier } from './wal-worker.ts'
import { WriteTurn } from './write-turn.ts'

export const CHECKPOINT_EVERY_MS = 400
/** Auto-checkpoint threshold of the server's own connection (pages; SQLite's default is 1000). */
export const BACKSTOP_PAGES = 80_000
/**
 * WAL size (frames) from which the worker takes the write turn to let the WAL
 * restart: fewer restarts help the tail, against a bigger WAL file
 * (docs/benchmarks.md#the-wal-and-its-checkpoints).
 */
export const RESTART_FRAMES = 32_000
/**
 * After this long with either no commit from another connection or at most
 * KEEP_WAL_BYTES of the WAL in use, the worker truncates a WAL file larger
 * than KEEP_WAL_BYTES: the 150-200 MB left by sustained writes is given back
 * when the load ends or drops. Not sooner: a truncated WAL grows again on the
 * next writes, each growth a file-system journal commit inside a WAL flush.
 */
export const IDLE_MS = 2_000
/** About SQLite's own auto-checkpoint size (1 000 pages): a WAL this small is left as it is. */
export const KEEP_WAL_BYTES = 4 * 1024 * 1024
/** How long the worker waits for the server's batch to end before trying again at its next pass. */
const TURN_WAIT_MS = 100
/** A worker that holds the turn this long is taken to be stuck: the server writes anyway (the turn is advisory). */
export const TURN_STUCK_MS = 1_000

export interface CheckpointReport {
  ok: boolean
  log?: number
  checkpointed?: number
  /** Every frame copied while the server waited: its next transaction restarts the WAL. */
  restarted?: boolean
  /** The load had stopped or dropped (IDLE_MS), and the WAL file was truncated to nothing; false: it tried and gave way. */
  truncated?: boolean
  /** How long the server's writes waited for that last pass, or for the truncation. */
  held_ms?: number
  error?: string
}

export interface Checkpointer {
  /** Shared with the server's storage runner (store/sqlite/write-turn.ts). */
  turn: WriteTurn
  /** Resolves after the next checkpoint the worker reports (tests use it). */
  next(): Promise<CheckpointReport>
  /** Asks the worker to close its connection and exit; resolves when it has (or after STOP_WAIT_MS). */
  stop(): Promise<void>
}

export function startCheckpointer(
  db: Db,
  path: string,
  busyTimeoutMs: number,
  onError: (message: string) => void,
  /** Tests use a smaller WAL and shorter passes. */
  tuning: { restartFrames?: number; everyMs?: number; idleMs?: number; keepWalBytes?: number } = {},
): Checkpointer {
  const { restartFrames = RESTART_FRAMES, everyMs = CHECKPOINT_EVERY_MS, idleMs = IDLE_MS, keepWalBytes = KEEP_WAL_BYTES } = tuning
  db.$client.run(`PRAGMA wal_autocheckpoint = ${BACKSTOP_PAGES}`)
  const worker = new Worker(walWorkerSpecifier())
  const turn = new WriteTurn(TURN_STUCK_MS)
  let waiting: ((r: CheckpointReport) => void)[] = []
  let lastError = ''
  worker.onmessage = (event: MessageEvent) => {
    if (event.data.freed) return turn.freed()
    const r = event.data as CheckpointReport
    if (!r.ok && r.error !== lastError) onError(r.error ?? 'unknown error')
    lastError = r.ok ? '' : (r.error ?? '')
    const w = waiting
    waiting = []
    for (const resolve of w) resolve(r)
  }
  worker.onerror = (event) => onError(event.message)
  worker.postMessage({
    role: 'checkpoint',
    path,
    everyMs,
    busyTimeoutMs,
    turn: turn.buffer,
    restartFrames,
    turnWaitMs: TURN_WAIT_MS,
    idlePasses: Math.max(1, Math.ceil(idleMs / everyMs)),
    keepWalBytes,
  } satisfies WalWorkerStart)
  // The worker must not keep the process alive on its own.
  worker.unref()
  return {
    turn,
    next: () => new Promise((resolve) => waiting.push(resolve)),
    // The worker closes its connection and exits (a terminated thread would leave it open).
    stop: () => stopWorker(worker),
  }
}
