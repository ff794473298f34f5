/**
 * Signing in and out (docs/console.md#the-json-api): as JSON for scripts
 * (POST, GET and DELETE /console/api/session) and as plain HTML forms for
 * the page without script (GET and POST /console/sign-in, POST
 * /console/sign-out). Sign-in is the one state-changing request without a
 * CSRF token (there is no session yet); its failures are limited per
 * operator name and per client address (otp/operators.ts).
 */
import { Type as T } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { Msg } from '../http/error-texts.ts'
import { errors, type Json, methodNotAllowed, notFound, REQUEST_ID, ref, response } from '../http/openapi-parts.ts'
import type { Logger } from '../lib/logger.ts'
import type { Operators, SignInOutcome } from '../otp/operators.ts'
import { sessionGate } from './session-gate.ts'
import {
  API_PATH,
  CONSOLE_PATH,
  clearedCookie,
  clientAddress,
  consoleError,
  consoleJson,
  readConsoleBody,
  redirect,
  SIGN_IN_PATH,
  sessionCookie,
  sessionTokenOf,
  type Transport,
} from './http.ts'
import { ConsoleMsg, SIGN_IN_LIMITED_PATTERN } from './error-texts.ts'
import { SignInBody } from './models.ts'
import { htmlResponse, safeNext, signInPage } from './pages.ts'
import { bodyCheck } from './validate.ts'
import { consoleBodyErrors, CONSOLE_TAGS, CSRF_EXAMPLE, signedInOperation, sentence } from './openapi.ts'

export interface SessionRouteDeps extends Transport {
  operators: Operators
  logger: Logger
}

const checkSignIn = bodyCheck(SignInBody)

type Peer = { requestIP(r: Request): { address: string } | null } | null

export function sessionRoutes(deps: SessionRouteDeps) {
  return new Elysia({ name: 'console-session-routes' }).use(signInRoutes(deps)).use(signedInRoutes(deps))
}

/** A sign-in, logged by the operator's name and the client's address (never the password). */
async function signIn(deps: SessionRouteDeps, request: Request, server: Peer, name: string, password: string): Promise<SignInOutcome> {
  const address = clientAddress(request, server?.requestIP(request)?.address, deps)
  const outcome = await deps.operators.signIn(name, password, address)
  // Never the password; the name is the operator's, not a secret.
  if (!outcome.ok) deps.logger.warn('console sign-in refused', { operator: name, reason: outcome.reason, ...(address === null ? {} : { address }) })
  else deps.logger.info('console sign-in', { operator: outcome.session.operator })
  return outcome
}

/** Signing in: the HTML form and the JSON API, the one change without a session. */
function signInRoutes(deps: SessionRouteDeps) {
  return new Elysia({ name: 'console-sign-in' })
    .get(SIGN_IN_PATH, ({ request }) => htmlResponse(signInPage({ next: new URL(request.url).searchParams.get('next') ?? undefined })))
    .post(
      SIGN_IN_PATH,
      async ({ request, server }) => {
        const body = await readConsoleBody(request)
        const fields = body.ok ? body.fields : {}
        const checked = checkSignIn(Object.fromEntries(Object.entries(fields).filter(([k]) => k !== '_csrf')))
        if (!checked.ok) return htmlResponse(signInPage({ error: body.ok ? checked.error : body.error, next: String(fields.next ?? '') }), 400)
        const { name, password, next } = checked.value
        const outcome = await signIn(deps, request, server, name, password)
        if (outcome.ok) return redirect(safeNext(next), { 'set-cookie': sessionCookie(outcome.token, request, deps) })
        if (outcome.reason === 'limited') {
          return htmlResponse(signInPage({ error: ConsoleMsg.signInLimited(outcome.retryAfter), next, name }), 429, {
            'retry-after': String(outcome.retryAfter),
          })
        }
        return htmlResponse(signInPage({ error: ConsoleMsg.signInInvalid, next, name }), 401)
      },
      { parse: 'none' },
    )
    .post(
      `${API_PATH}/session`,
      async ({ request, server }) => {
        const body = await readConsoleBody(request)
        if (!body.ok) return consoleError(request, body.status, body.error)
        const checked = checkSignIn(body.fields)
        if (!checked.ok) return consoleError(request, 400, checked.error)
        const outcome = await signIn(deps, request, server, checked.value.name, checked.value.password)
        if (outcome.ok) {
          const res = consoleJson(request, { status: 200, body: { operator: outcome.session.operator, csrf_token: outcome.session.csrf } })
          res.headers.set('set-cookie', sessionCookie(outcome.token, request, deps))
          return res
        }
        if (outcome.reason === 'limited') return consoleError(request, 429, ConsoleMsg.signInLimited(outcome.retryAfter), outcome.retryAfter)
        return consoleError(request, 401, ConsoleMsg.signInInvalid)
      },
      { parse: 'none' },
    )
}

/** The session of the signed-in operator: read it, end it (JSON or the HTML form). */
function signedInRoutes(deps: SessionRouteDeps) {
  const signOut = async (request: Request) => {
    const token = sessionTokenOf(request)
    if (token !== undefined) await deps.operators.signOut(token)
  }
  return new Elysia({ name: 'console-session' })
    .use(sessionGate(deps))
    .get(`${API_PATH}/session`, ({ request, operator }) =>
      consoleJson(request, { status: 200, body: { operator: operator.operator, csrf_token: operator.csrf } }),
    )
    .delete(`${API_PATH}/session`, async ({ request }) => {
      await signOut(request)
      const res = consoleJson(request, { status: 200, body: { signed_out: true } })
      res.headers.set('set-cookie', clearedCookie(request, deps))
      return res
    })
    .post(`${CONSOLE_PATH}/sign-out`, async ({ request }) => {
      await signOut(request)
      return redirect(SIGN_IN_PATH, { 'set-cookie': clearedCookie(request, deps) })
    })
}

/** The routes' operations in the OpenAPI document (app/openapi.ts assembles them). */
export const sessionOperations: Record<string, Json> = {
  '/console/api/session': {
    post: {
      operationId: 'consoleSignIn',
      tags: CONSOLE_TAGS,
      summary: 'Sign in: sets the session cookie and gives the CSRF token',
      security: [],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: ref('ConsoleSignInBody'), example: { name: 'alice', password: 'correct horse battery staple' } } },
      },
      responses: {
        '200': {
          ...response('Signed in; the cookie is in Set-Cookie', ref('ConsoleSessionResponse'), {
            operator: 'alice',
            csrf_token: CSRF_EXAMPLE,
            request_id: REQUEST_ID,
          }),
        },
        '400': errors('A bad body', [...consoleBodyErrors, sentence('password is required')]),
        '401': errors('Unknown operator, disabled operator or wrong password (one message for all)', [ConsoleMsg.signInInvalid]),
        '404': notFound,
        ...methodNotAllowed,
        '429': errors(
          'Too many failed sign-ins for this operator name or client address in 15 min',
          [T.String({ pattern: SIGN_IN_LIMITED_PATTERN, examples: [ConsoleMsg.signInLimited(840)] })],
          {
            retry: true,
          },
        ),
        '500': errors('Internal fault', [Msg.internal]),
      },
    },
    get: signedInOperation({
      id: 'consoleSession',
      summary: 'The signed-in operator and the CSRF token',
      state: false,
      ok: [200, 'Signed in', 'ConsoleSessionResponse', { operator: 'alice', csrf_token: CSRF_EXAMPLE }],
    }),
    delete: signedInOperation({
      id: 'consoleSignOut',
      summary: 'Sign out: the session ends',
      state: true,
      ok: [200, 'Signed out; the cookie is cleared', 'ConsoleSignedOutResponse', { signed_out: true }],
    }),
  },
}
