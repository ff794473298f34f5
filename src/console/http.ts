/**
 * What every console answer shares (docs/console.md#security-model): its
 * security headers, the session cookie, the client's address, JSON answers in
 * the API's shape (http/reply.ts: `request_id`, X-Request-Id, Retry-After),
 * and bodies read with the API's 16 KiB cap, as JSON or as an HTML form.
 */
import { errorReply, type Reply, render } from '../http/reply.ts'
import { isJsonContentType, readBytes } from '../http/body.ts'
import { Msg } from '../http/error-texts.ts'
import { requestIdOf } from '../http/request-log.ts'
import { canonicalIp } from '../http/validate.ts'
import { ipScope } from '../otp/fraud.ts'
import { ConsoleMsg } from './error-texts.ts'

export const CONSOLE_PATH = '/console'
export const API_PATH = '/console/api'
export const SIGN_IN_PATH = '/console/sign-in'
export const SESSION_COOKIE = 'otpd_console'
export const CSRF_HEADER = 'x-csrf-token'
export const CSRF_FIELD = '_csrf'

/**
 * No inline script or style, nothing from another origin, no framing, forms
 * post only to the console itself. Scripts the pages need are files the
 * binary serves under /console/.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

/**
 * Sets the console's headers on an answer. Cache-Control no-store unless the
 * answer set its own (an embedded asset may be cached; nothing with data is).
 */
export function withSecurityHeaders(res: Response): Response {
  const h = res.headers
  h.set('content-security-policy', CONTENT_SECURITY_POLICY)
  h.set('x-content-type-options', 'nosniff')
  h.set('referrer-policy', 'no-referrer')
  h.set('x-frame-options', 'DENY')
  if (!h.has('cache-control')) h.set('cache-control', 'no-store')
  return res
}

/** A JSON answer in the API's shape, with the console's headers. */
export function consoleJson(request: Request, reply: Reply): Response {
  return withSecurityHeaders(render(reply, requestIdOf(request)))
}

export function consoleError(request: Request, status: number, error: string, retryAfter?: number): Response {
  return consoleJson(request, errorReply(status, error, retryAfter))
}

/** 303 See Other: after a form post, the browser GETs `location`. */
export function redirect(location: string, headers: Record<string, string> = {}): Response {
  return withSecurityHeaders(new Response(null, { status: 303, headers: { location, ...headers } }))
}

export function sessionTokenOf(request: Request): string | undefined {
  const header = request.headers.get('cookie')
  if (header === null) return undefined
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq !== -1 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim()
  }
  return undefined
}

export interface Transport {
  /** `console.trust_proxy`: the reverse proxy's X-Forwarded-For and X-Forwarded-Proto are believed. */
  trustProxy: boolean
}

/** Whether the browser reached the console over https: the listener's TLS, or a trusted proxy's X-Forwarded-Proto. */
export function isHttps(request: Request, t: Transport): boolean {
  if (new URL(request.url).protocol === 'https:') return true
  return t.trustProxy && request.headers.get('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase() === 'https'
}

/**
 * The session cookie: HttpOnly (no script reads it), SameSite=Strict (no
 * other site's page sends it), Path=/console, Secure over https. No
 * Max-Age: the session's own idle expiry ends it on the server.
 */
export function sessionCookie(token: string, request: Request, t: Transport): string {
  return `${SESSION_COOKIE}=${token}; Path=${CONSOLE_PATH}; HttpOnly; SameSite=Strict${isHttps(request, t) ? '; Secure' : ''}`
}

export function clearedCookie(request: Request, t: Transport): string {
  return `${SESSION_COOKIE}=; Path=${CONSOLE_PATH}; HttpOnly; SameSite=Strict; Max-Age=0${isHttps(request, t) ? '; Secure' : ''}`
}

/**
 * What the failed sign-in limit counts a client as: its address (the last
 * X-Forwarded-For hop behind a trusted proxy, when that hop is a bare
 * address; otherwise the peer's, so a hop such as `1.2.3.4:443` cannot step
 * out of the limit), an IPv6 address as its /64 network as the fraud guard
 * does. Null when unknown.
 */
export function clientAddress(request: Request, peer: string | undefined, t: Transport): string | null {
  const hops = t.trustProxy ? request.headers.get('x-forwarded-for')?.split(',') : undefined
  const forwarded = canonicalIp(hops?.[hops.length - 1]?.trim() ?? '')
  const canonical = forwarded ?? (peer === undefined ? null : canonicalIp(peer))
  return canonical === null ? null : ipScope(canonical)
}

export type ConsoleBody = { ok: true; fields: Record<string, unknown>; form: boolean } | { ok: false; status: 400 | 413; error: string }

const FORM_TYPE = 'application/x-www-form-urlencoded'

/**
 * A state-changing request's body: a JSON object, an HTML form
 * (urlencoded; every value a string), or nothing. At most 16 KiB.
 */
export async function readConsoleBody(request: Request): Promise<ConsoleBody> {
  const type = request.headers.get('content-type')
  const bytes = await readBytes(request)
  if (!(bytes instanceof Uint8Array)) return bytes
  if (bytes.byteLength === 0) return { ok: true, fields: {}, form: false }
  if (type !== null && type.split(';')[0]!.trim().toLowerCase() === FORM_TYPE) {
    const fields: Record<string, unknown> = {}
    for (const [k, v] of new URLSearchParams(new TextDecoder().decode(bytes))) fields[k] = v
    return { ok: true, fields, form: true }
  }
  if (!isJsonContentType(type)) return { ok: false, status: 400, error: ConsoleMsg.contentType }
  let parsed: unknown
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch {
    return { ok: false, status: 400, error: Msg.invalidJson }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { ok: false, status: 400, error: Msg.notObject }
  return { ok: true, fields: parsed as Record<string, unknown>, form: false }
}
