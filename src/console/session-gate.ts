/**
 * The console's session gate, for every route behind the sign-in
 * (docs/console.md#security-model). A module puts its routes behind it with
 * `.use(sessionGate(deps))` in its own Elysia instance (its hooks are
 * `scoped`; Elysia keeps one copy per instance by name). For each request it:
 * - finds the cookie's session; without a live one, 401 under /console/api/,
 *   elsewhere a 303 to the sign-in page;
 * - on any method but GET and HEAD, refuses a `viewer` (403) unless the
 *   route only reads or ends the viewer's own session (READS_BY_POST), reads
 *   the body itself (JSON or a form, 16 KiB at most, only once the session is
 *   known) and requires the session's CSRF token (X-CSRF-Token or `_csrf`):
 *   without it, 403 before the handler;
 * - gives the handler `operator`, `actor` (for the audit log), `input` (the
 *   fields but `_csrf`; {} on GET) and `form` (whether an HTML form sent it).
 */
import { timingSafeEqual } from 'node:crypto'
import { Elysia } from 'elysia'
import type { Actor } from '../otp/audit.ts'
import type { ConsoleSession, Operators } from '../otp/operators.ts'
import { API_PATH, consoleError, CSRF_FIELD, CSRF_HEADER, readConsoleBody, redirect, SIGN_IN_PATH, sessionTokenOf } from './http.ts'
import { ConsoleMsg } from './error-texts.ts'

export interface SessionGateDeps {
  operators: Operators
}

/** What the gate gives each handler. */
export interface SignedInContext {
  operator: ConsoleSession
  actor: Actor
  input: Record<string, unknown>
  /** Whether `input` came from an HTML form (every value text: console/act.ts fromForm). */
  form: boolean
}

const SAFE_METHODS = new Set(['GET', 'HEAD'])
/**
 * The routes a viewer may send a body to: searches (POST keeps a recipient
 * out of URLs, docs/console.md#verifications) and signing out.
 */
export const READS_BY_POST = new Set([
  'POST /console/verifications',
  'POST /console/api/verifications/search',
  'POST /console/sign-out',
  'DELETE /console/api/session',
])
/** Elysia's body for signedIn routes: the gate reads the request's body itself. */
const UNPARSED = Object.freeze({})

function sameToken(presented: unknown, expected: string): boolean {
  if (typeof presented !== 'string' || presented.length !== expected.length) return false
  return timingSafeEqual(Buffer.from(presented), Buffer.from(expected))
}

export function isApiPath(pathname: string): boolean {
  return pathname === API_PATH || pathname.startsWith(`${API_PATH}/`)
}

type Resolved = { denied: Response; operator?: undefined } | ({ denied?: undefined } & SignedInContext)

async function resolveRequest(deps: SessionGateDeps, request: Request): Promise<Resolved> {
  const url = new URL(request.url)
  const api = isApiPath(url.pathname)
  const token = sessionTokenOf(request)
  const session = token === undefined ? undefined : await deps.operators.session(token)
  if (session === undefined) {
    if (api) return { denied: consoleError(request, 401, ConsoleMsg.signInRequired) }
    const next = request.method === 'GET' ? `?next=${encodeURIComponent(url.pathname + url.search)}` : ''
    return { denied: redirect(`${SIGN_IN_PATH}${next}`) }
  }
  const actor: Actor = { operator: session.operator, source: 'console' }
  if (SAFE_METHODS.has(request.method)) return { operator: session, actor, input: {}, form: false }
  if (session.role !== 'admin' && !READS_BY_POST.has(`${request.method} ${url.pathname}`)) {
    return { denied: consoleError(request, 403, ConsoleMsg.viewerReadOnly(session.operator)) }
  }
  const header = request.headers.get(CSRF_HEADER)
  // A header that is there and wrong is refused before the body is read.
  if (header !== null && !sameToken(header, session.csrf)) return { denied: consoleError(request, 403, ConsoleMsg.csrf) }
  const body = await readConsoleBody(request)
  if (!body.ok) {
    return { denied: header === null ? consoleError(request, 403, ConsoleMsg.csrf) : consoleError(request, body.status, body.error) }
  }
  const { [CSRF_FIELD]: field, ...input } = body.fields
  if (header === null && !sameToken(field, session.csrf)) return { denied: consoleError(request, 403, ConsoleMsg.csrf) }
  return { operator: session, actor, input, form: body.form }
}

export function sessionGate(deps: SessionGateDeps) {
  return new Elysia({ name: 'console-session-gate' })
    .onParse({ as: 'scoped' }, () => UNPARSED)
    .resolve({ as: 'scoped' }, async ({ request }) => {
      const r = await resolveRequest(deps, request)
      // A denied request never reaches a handler (onBeforeHandle answers it): its context is never read.
      if (r.denied) return { denied: r.denied, operator: undefined as unknown as ConsoleSession, actor: undefined as unknown as Actor, input: {}, form: false }
      return { denied: undefined, operator: r.operator, actor: r.actor, input: r.input, form: r.form }
    })
    .onBeforeHandle({ as: 'scoped' }, ({ denied }) => denied)
}
