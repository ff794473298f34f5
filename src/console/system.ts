/**
 * The console's system page (docs/console.md#system): version, engine,
 * database size, readiness, the providers of each channel, and the effective
 * configuration with every secret masked. A value is masked when its key
 * names a secret (secret, token, password, key, auth, credential), unless
 * the key names where the secret is read from (`*_env`, `*_file`), and a
 * password inside a URL is masked wherever it appears: what leaves here can
 * be pasted into a ticket.
 */
import type { Config } from '../config/schema.ts'
import type { Readiness } from '../http/ops-routes.ts'
import type { DatabaseFile } from '../store/engine.ts'

export const MASK = '********'
const SECRET_KEY = /secret|token|password|passwd|pass$|key|auth|credential/i
const WHERE_FROM = /_(env|file)$/i

/** `value` with its secrets masked (a deep copy). */
export function maskSecrets(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => maskSecrets(v, key))
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, maskSecrets(v, k)]))
  }
  if (typeof value === 'string') {
    if (SECRET_KEY.test(key) && !WHERE_FROM.test(key)) return MASK
    return maskUrlPassword(value)
  }
  return value
}

/** `scheme://user:password@host` with the password masked; any other text as it is. */
export function maskUrlPassword(text: string): string {
  return text.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@\s]*):[^@\s]*@/i, `$1:${MASK}@`)
}

export interface SystemDeps {
  version: string
  engine: { name: 'sqlite' | 'postgres'; display: string; sizes(): DatabaseFile[] }
  readiness(): Promise<Readiness>
  config(): Config
  /** Each channel's providers (name and type), in order. */
  providers(): Record<string, { name: string; type: string }[]>
  /** Each provider's circuit and slots on this node (docs/delivery.md#circuit-breaking), by provider name. */
  circuits(): ProviderCircuit[]
}

/** One provider's circuit and slots, as the page shows them. */
export interface ProviderCircuit {
  provider: string
  circuit: 'closed' | 'open' | 'half_open'
  in_flight: number
  waiting: number
  max_in_flight: number
}

/** GET /console/api/system's body. */
export type SystemJson = {
  version: string
  engine: 'sqlite' | 'postgres'
  database: string
  database_bytes: number | null
  database_files: DatabaseFile[]
  ready: boolean
  checks: Record<string, 'ok' | 'failed'>
  providers: Record<string, { name: string; type: string }[]>
  circuits: ProviderCircuit[]
  config: unknown
}

export async function systemView(d: SystemDeps): Promise<SystemJson> {
  const ready = await d.readiness()
  const sizes = d.engine.sizes()
  return {
    version: d.version,
    engine: d.engine.name,
    database: maskUrlPassword(d.engine.display),
    database_bytes: sizes.length === 0 ? null : sizes.reduce((n, f) => n + f.bytes, 0),
    database_files: sizes,
    ready: Object.values(ready).every((p) => p === null),
    // The problems themselves go to the log (they may name hosts); the page says which check failed, as /readyz does.
    checks: Object.fromEntries(Object.entries(ready).map(([k, p]) => [k, p === null ? 'ok' : 'failed'])),
    providers: d.providers(),
    circuits: d.circuits(),
    config: maskSecrets(d.config()),
  }
}
