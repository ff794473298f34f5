/**
 * What the hook types share: reading the raw body, comparing a presented
 * credential with the configured one, reading a type's own settings, and how
 * a refusal is answered (its status, Retry-After, a body of a given type).
 * The SMS-gateway style types (auth0, authentik, keycloak, kratos) take their
 * answers whole: those servers read only the status (and log or show the
 * body), so one mapping serves all four. Logto, Zitadel and Supabase keep
 * only what their protocol asks: the body's shape and, for Supabase, the
 * status it reads (docs/integrations.md).
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { HookRefusal, HookRefusalKind, HookReply, HookSettings } from './adapter.ts'
import { json } from './payload.ts'

const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

/** The body as text, or undefined when it is not valid UTF-8. */
export function bodyText(raw: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(raw)
  } catch {
    return undefined
  }
}

/** The body as a JSON object, or undefined. */
export function jsonObject(raw: Uint8Array): Record<string, unknown> | undefined {
  return json(raw) ?? undefined
}

/** Constant-time equality of two secrets: digests first, so neither the length nor a prefix leaks. */
export function sameSecret(presented: string | Uint8Array, expected: string | Uint8Array): boolean {
  const a = createHash('sha256').update(presented).digest()
  const b = createHash('sha256').update(expected).digest()
  return timingSafeEqual(a, b)
}

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive, RFC 9110). */
export function bearerToken(headers: Headers): string | undefined {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(headers.get('authorization') ?? '')
  return match?.[1]
}

/** The user and password of an `Authorization: Basic` header. */
export function basicCredentials(headers: Headers): { user: string; password: string } | undefined {
  const match = /^Basic[ \t]+([A-Za-z0-9+/=]+)[ \t]*$/i.exec(headers.get('authorization') ?? '')
  if (!match?.[1]) return undefined
  const decoded = Buffer.from(match[1], 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  return colon < 0 ? undefined : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
}

/** Checks Basic credentials against the hook's `username` setting and its secret. */
export function basicMatches(headers: Headers, settings: HookSettings): boolean {
  const presented = basicCredentials(headers)
  if (presented === undefined || settings.secret === undefined) return false
  // Both compared, always: which one was wrong is not told by the time taken.
  const user = sameSecret(presented.user, stringOption(settings, 'username', ''))
  const password = sameSecret(presented.password, settings.secret)
  return user && password
}

export function stringOption(settings: HookSettings, name: string, fallback: string): string {
  const value = settings.options[name]
  return typeof value === 'string' ? value : fallback
}

export function booleanOption(settings: HookSettings, name: string, fallback: boolean): boolean {
  const value = settings.options[name]
  return typeof value === 'boolean' ? value : fallback
}

/** The first of `names` that is a string with more than blanks in it, as given; undefined when none is. */
export function stringField(object: Record<string, unknown>, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = object[name]
    if (typeof value === 'string' && value.trim() !== '') return value
  }
  return undefined
}

/** A phone number as typed (`+1 399 999`, `+49 (0)151-234`) in E.164: separators dropped, `00` read as `+`. */
export function phoneNumber(given: string): string {
  const compact = given.replace(/\(0\)/g, '').replace(/[\s().\-/]/g, '')
  return compact.startsWith('00') ? `+${compact.slice(2)}` : compact
}

export type RefusalStatuses = Readonly<Record<HookRefusalKind, number>>

const REFUSAL_STATUS: RefusalStatuses = {
  unauthenticated: 401,
  invalid: 400,
  rate_limited: 429,
  no_credits: 402,
  blocked: 403,
  recipient_rejected: 422,
  unavailable: 503,
}

/** Logto's, Zitadel's and Supabase's: a rejected recipient is bad input like any other (docs/integrations.md). */
export const RECIPIENT_AS_INVALID: RefusalStatuses = { ...REFUSAL_STATUS, recipient_rejected: 400 }

const TEXT_TYPE = 'text/plain; charset=utf-8'
const JSON_TYPE = 'application/json'

function retryHeaders(refusal: HookRefusal): Record<string, string> {
  return refusal.retryAfter === undefined ? {} : { 'retry-after': String(Math.max(1, Math.ceil(refusal.retryAfter))) }
}

function refusalReply(refusal: HookRefusal, status: number, contentType: string, body: string): HookReply {
  return { status, headers: { 'content-type': contentType, ...retryHeaders(refusal) }, body }
}

/** A refusal as plain text, its message: for servers that show or log the body as they got it. */
export function textRefusal(refusal: HookRefusal, statuses: RefusalStatuses = REFUSAL_STATUS): HookReply {
  return refusalReply(refusal, statuses[refusal.kind], TEXT_TYPE, refusal.message)
}

/** A refusal as the JSON `body` a server reads, on `status`, with Retry-After when the refusal has one. */
export function jsonRefusalWith(refusal: HookRefusal, status: number, body: unknown): HookReply {
  return refusalReply(refusal, status, JSON_TYPE, JSON.stringify(body))
}

/** A refusal as JSON `{ error, error_description }`. */
export function jsonRefusal(refusal: HookRefusal): HookReply {
  return jsonRefusalWith(refusal, REFUSAL_STATUS[refusal.kind], { error: refusal.kind, error_description: refusal.message })
}

/** The answer once a message is accepted: 200 with the verification's id. */
export function acceptedReply(verificationId: string): HookReply {
  return { status: 200, headers: { 'content-type': JSON_TYPE }, body: JSON.stringify({ id: verificationId }) }
}

/** The answer once a message is accepted, for a server that reads no id: 200 `{}`. */
export function emptyAccepted(): HookReply {
  return { status: 200, headers: { 'content-type': JSON_TYPE }, body: '{}' }
}
