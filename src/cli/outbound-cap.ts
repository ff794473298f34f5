/**
 * `serve` takes Bun's cap on outgoing requests out of the way before anything
 * else runs (docs/operating.md#outgoing-requests): the process replaces itself
 * (same pid, same arguments, same open descriptors) with one started with
 * BUN_CONFIG_MAX_HTTP_REQUESTS set, since Bun reads it only at start.
 *
 * It runs when this module is loaded: main.ts imports it first, so the
 * process starts again before the rest of the program is even loaded (done
 * from the serve command, the restart cost a second load of the whole program:
 * about 250 ms more to listening, against about 10 ms from here).
 */
import { uncappedOutboundEnv } from '../config/outbound-cap.ts'

/** The compiled binary's own script path: its arguments start after it. */
const COMPILED = /^\/\$bunfs\//

/** The command a command line names: its first word that is not an option (top-level options take no value). */
function commandOf(argv: readonly string[]): string | undefined {
  return argv.slice(2).find((a) => !a.startsWith('-'))
}

/** Starts this process again with the cap raised; returns only if it needs no restart, or cannot (the reason). */
function raiseOutboundCap(): string | null {
  const env = uncappedOutboundEnv()
  if (env === null) return null
  const argv = COMPILED.test(Bun.main) ? [process.execPath, ...process.argv.slice(2)] : [process.execPath, ...process.execArgv, ...process.argv.slice(1)]
  if (typeof process.execve !== 'function') return 'this runtime has no process.execve'
  try {
    process.execve(process.execPath, argv, env)
  } catch (err) {
    return err instanceof Error ? err.message : String(err)
  }
  return null
}

/** Why `serve` still runs under the cap (it logs it), or null. */
export const outboundCapProblem: string | null = commandOf(process.argv) === 'serve' ? raiseOutboundCap() : null
