/**
 * The server's side of the rollup worker (rollup-worker.ts): plans the
 * console rollup's batches on a thread with its own read connection, so that
 * bun:sqlite's synchronous reads of a busy minute never hold up a request
 * (docs/console.md#performance). A plan is only ever a read: if the worker
 * dies, the next batch fails, is logged, and runs again.
 */
import type { PlanOptions, RollupPlan } from '../../otp/rollup.ts'
import type { OffThreadPlanner } from '../engine.ts'
import { stopWorker } from './wal-worker.ts'
import type { RollupWorkerOpen, RollupWorkerPlan } from './rollup-worker.ts'

/** From source the worker sits beside this file; in the compiled binary it is its own entry point (package.json "build"), named from `src/`. */
function workerSpecifier(): string {
  const beside = new URL('./rollup-worker.ts', import.meta.url)
  return beside.pathname.startsWith('/$bunfs/') ? './store/sqlite/rollup-worker.ts' : beside.href
}

export function startRollupPlanner(path: string, secret: Uint8Array, busyTimeoutMs: number): OffThreadPlanner {
  const worker = new Worker(workerSpecifier())
  const waiting = new Map<number, { resolve: (p: RollupPlan) => void; reject: (e: Error) => void }>()
  let next = 0
  // Once the thread is gone, every plan fails at once (the rollup logs it and runs again later).
  let gone: string | null = null
  const failAll = (message: string) => {
    gone ??= message
    for (const w of waiting.values()) w.reject(new Error(message))
    waiting.clear()
  }
  worker.onmessage = (event: MessageEvent<{ id: number; ok: boolean; plan?: RollupPlan; error?: string }>) => {
    const w = waiting.get(event.data.id)
    if (!w) return
    waiting.delete(event.data.id)
    if (event.data.ok) w.resolve(event.data.plan!)
    else w.reject(new Error(event.data.error ?? 'the rollup worker failed'))
  }
  worker.onerror = (event) => failAll(`the rollup worker failed: ${event.message}`)
  worker.addEventListener('close', () => failAll('the rollup worker stopped'))
  worker.postMessage({ type: 'open', path, secret, busyTimeoutMs } satisfies RollupWorkerOpen)
  // The worker must not keep the process alive on its own.
  worker.unref()
  return {
    plan: (options: PlanOptions) =>
      new Promise<RollupPlan>((resolve, reject) => {
        if (gone !== null) return reject(new Error(gone))
        const id = next++
        waiting.set(id, { resolve, reject })
        worker.postMessage({ type: 'plan', id, options } satisfies RollupWorkerPlan)
      }),
    stop: async () => {
      failAll('the rollup worker stopped')
      await stopWorker(worker)
    },
  }
}
