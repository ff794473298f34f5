/**
 * The server's side of the console read worker (console-read-worker.ts):
 * the workflows page's aggregate runs on a thread with its own read
 * connection, so that it never holds a request (docs/console.md#performance).
 * The thread starts on the first read. A read that fails answers its error;
 * a thread that dies or takes longer than the bound is ended, its reads fail
 * with the reason, and the next read starts a new one.
 */
import type { WorkflowStepRow } from '../../otp/ports/index.ts'
import type { OffThreadReads } from '../engine.ts'
import type { ConsoleReadAnswer, ConsoleReadOpen, ConsoleReadWorkflowSteps } from './console-read-worker.ts'
import { stopWorker } from './wal-worker.ts'

/** How long a read may take before its thread is taken as hung and ended (docs/console.md#performance). */
export const CONSOLE_READ_TIMEOUT_MS = 30_000

export interface ConsoleReaderOptions {
  timeoutMs?: number
  /** The worker's module (tests give one that dies or hangs); asked again for each new thread. */
  specifier?: () => string
}

/** From source the worker sits beside this file; in the compiled binary it is its own entry point (package.json "build"), named from `src/`. */
export function consoleReadWorkerSpecifier(): string {
  const beside = new URL('./console-read-worker.ts', import.meta.url)
  return beside.pathname.startsWith('/$bunfs/') ? './store/sqlite/console-read-worker.ts' : beside.href
}

interface Waiting {
  resolve: (rows: WorkflowStepRow[]) => void
  reject: (e: Error) => void
  timer: ReturnType<typeof setTimeout>
}

/** One thread and the reads it owes; `end` fails them all and lets the thread go. */
class ReadThread {
  readonly worker: Worker
  private readonly waiting = new Map<number, Waiting>()
  private next = 0
  gone = false

  constructor(
    path: string,
    busyTimeoutMs: number,
    specifier: string,
    private readonly timeoutMs: number,
  ) {
    this.worker = new Worker(specifier)
    this.worker.onmessage = (event: MessageEvent<ConsoleReadAnswer>) => this.answer(event.data)
    this.worker.onerror = (event) => this.end(`the console read worker failed: ${event.message}`)
    this.worker.addEventListener('close', () => this.end('the console read worker stopped'))
    this.worker.postMessage({ type: 'open', path, busyTimeoutMs } satisfies ConsoleReadOpen)
    // The thread must not keep the process alive on its own.
    this.worker.unref()
  }

  read(from: number, to: number, accountId: number | null): Promise<WorkflowStepRow[]> {
    return new Promise<WorkflowStepRow[]>((resolve, reject) => {
      const id = this.next++
      const timer = setTimeout(() => {
        this.end(`the console read worker did not answer within ${this.timeoutMs} ms`)
        this.worker.terminate()
      }, this.timeoutMs)
      this.waiting.set(id, { resolve, reject, timer })
      this.worker.postMessage({ type: 'workflowSteps', id, from, to, accountId } satisfies ConsoleReadWorkflowSteps)
    })
  }

  private answer(a: ConsoleReadAnswer): void {
    const w = this.waiting.get(a.id)
    if (!w) return
    this.waiting.delete(a.id)
    clearTimeout(w.timer)
    if (a.ok) w.resolve(a.rows)
    else w.reject(new Error(`the console read failed: ${a.error}`))
  }

  end(message: string): void {
    this.gone = true
    for (const w of this.waiting.values()) {
      clearTimeout(w.timer)
      w.reject(new Error(message))
    }
    this.waiting.clear()
  }
}

export function startConsoleReader(path: string, busyTimeoutMs: number, opts: ConsoleReaderOptions = {}): OffThreadReads {
  const timeoutMs = opts.timeoutMs ?? CONSOLE_READ_TIMEOUT_MS
  const specifier = opts.specifier ?? consoleReadWorkerSpecifier
  let thread: ReadThread | undefined
  return {
    workflowSteps: (from, to, accountId) => {
      if (!thread || thread.gone) thread = new ReadThread(path, busyTimeoutMs, specifier(), timeoutMs)
      return thread.read(from, to, accountId)
    },
    stop: async () => {
      const t = thread
      thread = undefined
      if (!t || t.gone) return
      t.end('the console read worker stopped')
      await stopWorker(t.worker)
      // Still in a read past the wait: ended all the same.
      t.worker.terminate()
    },
  }
}
