/**
 * What the server and its WAL worker thread (checkpoint-worker.ts) share: the
 * start message and the shared-memory cells of the flush protocol. A leaf:
 * the worker loads this, never the main thread's modules.
 */

export type WalWorkerStart =
  | {
      role: 'checkpoint'
      path: string
      everyMs: number
      busyTimeoutMs: number
      turn: SharedArrayBuffer
      restartFrames: number
      turnWaitMs: number
      idlePasses: number
      keepWalBytes: number
    }
  | { role: 'sync'; walPath: string; cells: SharedArrayBuffer }

/** Int32 cells shared with the worker: the newest generation requested, a stop flag, and whether it sleeps. */
export const SYNC_REQUESTED = 0
export const SYNC_STOP = 1
export const SYNC_SLEEPING = 2
