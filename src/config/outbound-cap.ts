/**
 * Bun caps the outgoing requests a process has in flight (256 unless
 * BUN_CONFIG_MAX_HTTP_REQUESTS says otherwise) and reads that variable only
 * when the process starts (docs/operating.md#outgoing-requests). Besides the
 * config loader, this is the one module that reads process.env: Bun's own
 * variable, read before anything else loads (cli/outbound-cap.ts). No imports,
 * so it costs nothing to load first.
 */

export const OUTBOUND_CAP_VARIABLE = 'BUN_CONFIG_MAX_HTTP_REQUESTS'
/** The highest value Bun takes. */
export const OUTBOUND_CAP_MAX = '65535'

/**
 * The environment to start again with, the variable at its highest value; or
 * null when this process already has one (a value the operator set is kept).
 */
export function uncappedOutboundEnv(): Record<string, string> | null {
  if (process.env[OUTBOUND_CAP_VARIABLE] !== undefined) return null
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v
  env[OUTBOUND_CAP_VARIABLE] = OUTBOUND_CAP_MAX
  return env
}
