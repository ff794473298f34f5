/**
 * What SIGHUP can change in a running server without dropping a connection:
 * the request services read their settings from objects this module swaps or
 * updates in place, so a request that started keeps the settings it started
 * with and the next one gets the new ones. The rest (listeners, database,
 * secrets baked into hashes) needs a restart; reload names it instead.
 */
import { autoRoutesOf } from './routing.ts'
import type { AutoRoute } from '../otp/workflow.ts'
import type { Config } from '../config/schema.ts'
import { tlsFingerprint } from '../config/tls.ts'
import type { KeyLimiter } from '../otp/key-limiter.ts'
import type { Delivery } from '../otp/ports/index.ts'
import type { FraudGuard } from '../otp/fraud.ts'
import { fraudSettingsOf } from './fraud.ts'
import type { MessageCatalogue } from '../otp/messages/catalogue.ts'
import type { Limits, OutboundMessage } from '../otp/types.ts'

/** Settings a reload cannot apply: a listener is bound, the database open, TLS contexts built at start. */
export const RESTART_ONLY = [
  'server.listen',
  'server.admin_listen',
  'server.admin_allowed_hosts',
  'server.secret',
  'server.secret_env',
  'server.secret_file',
  'server.metrics_token',
  'server.tls',
  'server.public_url',
  'database.path',
  'database.synchronous',
  'database.busy_timeout_ms',
  'database.url',
  'database.password_env',
  'database.pool_size',
  'console.enabled',
  'console.trust_proxy',
] as const

/** The request limits from the config, read at start and on every reload. */
export function limitsOf(config: Config): Limits {
  const l = config.limits
  return {
    keyRequestsPerMinute: l.key_requests_per_minute,
    recipientPerMinute: l.recipient_per_minute,
    recipientPerHour: l.recipient_per_hour,
    recipientPerDay: l.recipient_per_day,
    maxFailedAttempts: l.max_failed_attempts,
    lockoutSeconds: l.lockout_seconds,
    recipientFailuresPerDay: l.recipient_failures_per_day,
  }
}

/** A delivery whose providers can be replaced; a send in flight finishes with the ones it started with. */
export class SwitchDelivery implements Delivery {
  constructor(public inner: Delivery) {}
  deliver(message: OutboundMessage): ReturnType<Delivery['deliver']> {
    return this.inner.deliver(message)
  }
}

/** The config and environment in force: what the server's closures read, replaced by a reload. */
export interface InForce {
  config: Config
  env: Record<string, string | undefined>
}

/** The live parts of a server that a reload updates (services.ts builds it). */
export interface LiveSettings {
  inForce: InForce
  /** The running certificate's files, as tlsFingerprint() read them at start. */
  tls: string
  limits: Limits
  /** null when the caller supplied its own delivery (tests): it is kept. */
  delivery: SwitchDelivery | null
  makeDelivery(config: Config): Delivery
  makeLimiter(max: number): KeyLimiter
  /** The service dependency objects, updated in place. */
  holders: { limiter: KeyLimiter }[]
  send: { defaultCodeLength: number; messages: MessageCatalogue; routes: AutoRoute[] }
  /** The message catalogue of a config: the operator's templates read again (docs/messages.md#templates). */
  makeCatalogue(config: Config): MessageCatalogue
  http: { lockoutSeconds: number; maxSendsInFlight: number }
  idempotency: { retentionHours: number }
  /** Its settings are replaced (the next send decides with them). */
  fraud?: FraudGuard
}

/**
 * The settings that differ between two configs, by dotted name (a table added
 * or removed is named once: `providers.tw`), and never their values: a
 * reload's log line says what changed without printing a secret.
 */
export function changedSettings(prev: Config, next: Config): string[] {
  const out: string[] = []
  const walk = (a: unknown, b: unknown, path: string) => {
    if (isTable(a) && isTable(b)) {
      for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) walk(a[k], b[k], path ? `${path}.${k}` : k)
    } else if (JSON.stringify(a) !== JSON.stringify(b)) out.push(path)
  }
  walk(prev, next, '')
  return out
}

/**
 * Environment variables the config names (`auth_token_env = "TWILIO_AUTH_TOKEN"`)
 * whose value differs between two environments (`--env-file` is read again
 * on a reload): their names only.
 */
export function changedVariables(config: Config, prev: Record<string, string | undefined>, next: Record<string, string | undefined>): string[] {
  const names = new Set<string>()
  const walk = (node: unknown) => {
    if (!isTable(node)) return
    for (const [k, v] of Object.entries(node)) {
      if (k.endsWith('_env') && typeof v === 'string') names.add(v)
      else walk(v)
    }
  }
  walk(config)
  return [...names].filter((n) => prev[n] !== next[n]).sort()
}

function isTable(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function at(config: Config, key: string): unknown {
  return key.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], config)
}

/** Applies `next` (already checked); returns the settings that differ but wait for a restart. */
export function applyReload(live: LiveSettings, next: Config, nextLimits: Limits): string[] {
  const restart: string[] = RESTART_ONLY.filter((k) => JSON.stringify(at(live.inForce.config, k)) !== JSON.stringify(at(next, k)))
  // Same paths, new content (a renewed certificate): it too waits for a restart.
  if (!restart.includes('server.tls') && tlsFingerprint(next.server.tls) !== live.tls) restart.push('server.tls')
  if (nextLimits.keyRequestsPerMinute !== live.limits.keyRequestsPerMinute) {
    const limiter = live.makeLimiter(nextLimits.keyRequestsPerMinute)
    for (const h of live.holders) h.limiter = limiter
  }
  Object.assign(live.limits, nextLimits)
  live.send.defaultCodeLength = next.codes.default_length
  live.send.messages = live.makeCatalogue(next)
  live.send.routes = autoRoutesOf(next)
  live.http.lockoutSeconds = next.limits.lockout_seconds
  live.http.maxSendsInFlight = next.delivery.max_sends_in_flight
  live.idempotency.retentionHours = next.idempotency.retention_hours
  if (live.fraud) live.fraud.settings = fraudSettingsOf(next)
  if (live.delivery) live.delivery.inner = live.makeDelivery(next)
  // What waits for a restart keeps its running value, so the next reload compares against what is in force.
  const running = live.inForce.config
  live.inForce.config = { ...next, server: running.server, database: running.database }
  return restart
}
