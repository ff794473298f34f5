/**
 * `serve` takes Bun's cap on outgoing requests out of the way before anything
 * else runs (docs/operating.md#outgoing-requests): the process replaces itself
 * (same pid, same arguments, same open descriptors) with one started with
 * BUN_CONFIG_MAX_HTTP_REQUESTS set, since Bun reads it only at start.
 */
import { uncappedOutboundEnv } from '../config/load.ts'

/** The compiled binary's own script path: its arguments start after it. */
const COMPILED = /^\/\$bunfs\//

/** Starts this process again with the cap raised; returns only if it needs no restart, or cannot (the reason). */
export function raiseOutboundCap(): string | null {
  const env = uncappedOutboundEnv()
  if (env === null) return null
  const argv = COMPILED.test(Bun.main) ? [process.execPath, ...process.argv.slice(2)] : [process.execPath, ...process.execArgv, ...process.argv.slice(1)]
  if (typeof process.execve !== 'function') return 'this runtime has no process.execve'
  try {
    process.execve(process.execPath, argv, env as Record<string, string>)
  } catch (err) {
    return err instanceof Error ? err.message : String(err)
  }
  return null
}
