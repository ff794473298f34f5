/**
 * What the API endpoints do before their operation, in the order of
 * docs/api.md#order-of-checks: authentication (401/403) -> per-key limit (429) ->
 * the Idempotency-Key header where one is taken (400, docs/api.md#idempotency-keys)
 * -> body (400/413). Nothing answered here is stored for an Idempotency-Key.
 */
import { displayPrefix, KEY_PREFIX, type Authenticator } from '../otp/api-keys.ts'
import type { KeyLimiter } from '../otp/key-limiter.ts'
import { keyRateLimitMessage, Msg } from './error-texts.ts'
import type { ApiKey } from '../otp/types.ts'
import { readJsonBody, type BodyResult } from './body.ts'
import { idempotencyKeyOf } from './idempotency.ts'
import { errorReply, type Reply } from './reply.ts'
import { noteOf } from './request-log.ts'
import type { ServiceMetrics } from './service-metrics.ts'

export interface AdmissionDeps {
  auth: Authenticator
  limiter: KeyLimiter
  metrics: ServiceMetrics
}

// Only a key of the documented shape has a display prefix worth logging; the
// first characters of anything else might be some other secret pasted by mistake.
const KEY_SHAPE = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{32,}$`)

export type Admitted = { ok: true; key: ApiKey; body: Record<string, unknown>; idempotencyKey: string | null } | { ok: false; reply: Reply }
export type Authenticated = { ok: true; key: ApiKey } | { ok: false; reply: Reply }

export interface AdmitOptions {
  /** The route takes an Idempotency-Key header (send, verify, cancel). */
  idempotent?: boolean
  /** How the body is read (cancel's may be empty). */
  readBody?: (request: Request) => Promise<BodyResult>
}

/** The key from `Authorization: Bearer` (which wins) or `x-api-key`; null when none was given. */
export function presentedKey(headers: Headers): string | null {
  // The Bearer scheme decides: whatever follows it is the key, well-formed or not
  // (a malformed one is then `Invalid API key`). Another scheme is no key at all.
  const m = /^\s*bearer(?:\s+(.*))?$/i.exec(headers.get('authorization') ?? '')
  const bearer = m?.[1]?.trim()
  if (bearer) return bearer
  const header = headers.get('x-api-key')?.trim()
  return header ? header : null
}

/** Authentication and the per-key limit as far as it is known without the database; no body is read. */
export async function authenticate(deps: AdmissionDeps, request: Request): Promise<Authenticated> {
  const raw = presentedKey(request.headers)
  if (raw === null) return { ok: false, reply: errorReply(401, Msg.keyRequired) }
  if (KEY_SHAPE.test(raw)) noteOf(request).keyPrefix = displayPrefix(raw)
  const auth = await deps.auth.authenticate(raw)
  if (!auth.ok) {
    return { ok: false, reply: auth.reason === 'disabled' ? errorReply(403, Msg.keyDisabled) : errorReply(401, Msg.keyInvalid) }
  }
  // A read only: the hit is counted by the operation's transaction, or by counted() below.
  const admission = deps.limiter.peek(auth.key.id)
  if (!admission.ok) {
    deps.metrics.rateLimited('key')
    return { ok: false, reply: keyLimitedReply(admission.max, admission.retryAfter) }
  }
  return { ok: true, key: auth.key }
}

export async function admit(deps: AdmissionDeps, request: Request, opts: AdmitOptions = {}): Promise<Admitted> {
  const auth = await authenticate(deps, request)
  if (!auth.ok) return auth
  let idempotencyKey: string | null = null
  if (opts.idempotent) {
    const header = idempotencyKeyOf(request.headers)
    if (!header.ok) return { ok: false, reply: await counted(deps, auth.key, errorReply(400, Msg.idempotencyKey)) }
    idempotencyKey = header.key
  }
  const body = await (opts.readBody ?? readJsonBody)(request)
  if (!body.ok) return { ok: false, reply: await counted(deps, auth.key, errorReply(body.status, body.error)) }
  return { ok: true, key: auth.key, body: body.body, idempotencyKey }
}

export function keyLimitedReply(max: number, retryAfter: number): Reply {
  return errorReply(429, keyRateLimitMessage(max, retryAfter), retryAfter)
}

/**
 * A request that ends before its operation (bad body or field) still counts
 * toward the per-key limit: `reply`, once the hit is recorded, or the 429 if
 * the window filled up meanwhile.
 */
export async function counted(deps: AdmissionDeps, key: ApiKey, reply: Reply): Promise<Reply> {
  const a = await deps.limiter.admitAlone(key.id)
  if (a.ok) return reply
  deps.metrics.rateLimited('key')
  return keyLimitedReply(a.max, a.retryAfter)
}
