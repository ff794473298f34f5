/**
 * The suite's one way to wait for something: polls a condition instead of
 * sleeping a fixed time, so a test waits as long as the thing takes and no
 * longer, and a timeout fails with what was awaited.
 */

export interface WaitOptions {
  /** What is awaited, for the failure message ("the reload", "the ledger to settle"). */
  what: string
  /** How long to wait before giving up (default 10 s). */
  ms?: number
  /** Pause between checks (default 20 ms; more where a check is costly, such as a request). */
  every?: number
}

/** Resolves once `check` holds; throws `timed out after N ms waiting for <what>` otherwise. */
export async function waitFor(check: () => boolean | Promise<boolean>, opts: WaitOptions): Promise<void> {
  if (!(await holds(check, opts))) throw new Error(`timed out after ${opts.ms ?? DEFAULT_MS} ms waiting for ${opts.what}`)
}

/**
 * Whether `check` came to hold within the time: for a test that asserts
 * something more telling first (a ledger's violations) and this result after.
 */
export async function holds(check: () => boolean | Promise<boolean>, opts: Omit<WaitOptions, 'what'>): Promise<boolean> {
  const until = Date.now() + (opts.ms ?? DEFAULT_MS)
  for (;;) {
    if (await check()) return true
    if (Date.now() > until) return false
    await Bun.sleep(opts.every ?? 20)
  }
}

const DEFAULT_MS = 10_000
