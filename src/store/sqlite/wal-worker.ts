/**
 * Starting and stopping the WAL worker thread from the server's side
 * (checkpointer.ts and wal-sync.ts start one each).
 */

/** How long a stop waits for a worker to close its connection and exit. */
export const STOP_WAIT_MS = 2_000

/** Posts 'stop' and resolves once the worker thread has exited (its connection closed), or after STOP_WAIT_MS. */
export function stopWorker(worker: Worker): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, STOP_WAIT_MS)
    worker.addEventListener('close', () => {
      clearTimeout(timer)
      resolve()
    })
    worker.postMessage('stop')
  })
}

/**
 * The worker's module. From source it sits beside this file. In the compiled
 * binary it is its own entry point (package.json "build" lists it), named
 * from the bundle root `src/`, which is not where this bundled module's URL
 * points.
 */
export function walWorkerSpecifier(): string {
  const beside = new URL('./checkpoint-worker.ts', import.meta.url)
  return beside.pathname.startsWith('/$bunfs/') ? './store/sqlite/checkpoint-worker.ts' : beside.href
}
