/**
 * The parts the console's route files document their operations with (the
 * OpenAPI document: app/openapi.ts assembles it): its own tag "Console", a
 * cookie security scheme (the session) and a header one (the CSRF token, on
 * every state-changing operation), its schemas and its examples.
 */
import { Type as T, type TSchema } from '@sinclair/typebox'
import { Msg } from '../http/error-texts.ts'
import { errors, type Json, type Message, methodNotAllowed, notFound, plain, REQUEST_ID, ref, response } from '../http/openapi-parts.ts'
import { SESSION_COOKIE } from './http.ts'
import { ConsoleMsg } from './error-texts.ts'
import * as M from './models.ts'

export const CONSOLE_TAGS = ['Console']
export const AT = '2026-01-01T12:05:00.000Z'
export const CSRF_EXAMPLE = '3f1e0c9a7b5d4c2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e'

export const CONSOLE_SCHEMAS: Record<string, TSchema> = {
  ConsoleSignInBody: M.SignInBody,
  ConsoleSessionResponse: M.SessionResponse,
  ConsoleSignedOutResponse: M.SignedOutResponse,
  ConsoleKeyCreateBody: M.KeyCreateBody,
  ConsoleKeyCreated: M.KeyCreated,
  ConsoleKeysResponse: M.KeysResponse,
  ConsoleKeyResponse: M.KeyResponse,
  ConsoleAccountsResponse: M.AccountsResponse,
  ConsoleAccountResponse: M.AccountResponse,
  ConsoleAccountSettingsBody: M.AccountSettingsBody,
  ConsoleCreditsBody: M.CreditsBody,
  ConsoleCreditsResult: M.CreditsResult,
  ConsoleLedgerResponse: M.LedgerResponse,
  ConsoleUnblockBody: M.UnblockBody,
  ConsoleUnblockResult: M.UnblockResult,
  ConsoleReplayResult: M.ReplayResult,
  ConsoleAuditResponse: M.AuditResponse,
  ConsoleSearchBody: M.SearchBody,
  ConsoleVerificationsResponse: M.VerificationsResponse,
}

export const CONSOLE_SECURITY_SCHEMES = {
  consoleSession: {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description: 'The session cookie POST /console/api/session sets (HttpOnly, SameSite=Strict, Path=/console; 12 h idle expiry, 24 h at most).',
  },
  consoleCsrf: {
    type: 'apiKey',
    in: 'header',
    name: 'X-CSRF-Token',
    description:
      "The session's CSRF token (`csrf_token` of POST or GET /console/api/session), required on every state-changing request; HTML forms may send it as the `_csrf` field.",
  },
}

/** A sentence of the service (the same the CLI prints), as a pattern schema with a sample. */
export const sentence = (example: string): TSchema => T.String({ minLength: 1, examples: [example] })
/** A viewer's refusal (console/session-gate.ts). */
export const VIEWER_REFUSED = T.String({
  pattern: "^Operator '[^']+' has the viewer role, which reads only: an admin can change it with otpd operators set [^ ]+ --role admin$",
  examples: [ConsoleMsg.viewerReadOnly('carol')],
})
export const consoleBodyErrors: Message[] = [ConsoleMsg.contentType, Msg.invalidJson, Msg.notObject]
const read = [{ consoleSession: [] }]
const change = [{ consoleSession: [], consoleCsrf: [] }]

export const KEY_EXAMPLE = { id: 3, prefix: 'Ab3dE9xQ', name: 'backend', account: 'default', status: 'active', created_at: AT, last_used_at: null }
export const ACCOUNT_EXAMPLE = {
  name: 'default',
  balance: 950,
  code_length: 6,
  code_length_is_default: true,
  countries: ['*'],
  countries_are_default: true,
  daily_credit_limit: null,
  test_recipients: true,
  created_at: AT,
}

export function signedInOperation(o: {
  id: string
  summary: string
  state: boolean
  ok: [number, string, string, unknown]
  body?: [string, unknown]
  more?: Record<string, unknown>
  params?: Json[]
}) {
  const [status, description, schema, example] = o.ok
  const responses: Record<string, unknown> = {
    [String(status)]: response(description, ref(schema), { ...(example as Json), request_id: REQUEST_ID }),
    '401': errors('No session, or it ended (12 h idle, 24 h after sign-in, signed out, operator disabled or password reset)', [ConsoleMsg.signInRequired]),
    ...(o.state
      ? { '403': errors('No CSRF token, or a wrong one, or a viewer (docs/console.md#roles): nothing changed', [ConsoleMsg.csrf, VIEWER_REFUSED]) }
      : {}),
    '404': notFound,
    ...methodNotAllowed,
    ...(o.more ?? {}),
    '500': errors('Internal fault', [Msg.internal]),
  }
  if (o.state && o.body === undefined && responses['400'] === undefined) responses['400'] = errors('A body that is not JSON or a form', consoleBodyErrors)
  const op: Json = { operationId: o.id, tags: CONSOLE_TAGS, summary: o.summary, security: o.state ? change : read, responses }
  if (o.params) op.parameters = o.params
  if (o.body) op.requestBody = { required: true, content: { 'application/json': { schema: ref(o.body[0]), example: o.body[1] } } }
  return op
}

export const pathParam = (name: string, description: string, example: string) => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: { type: 'string' },
  example,
})
export const queryParam = (name: string, description: string, schema: Json, example: unknown) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
  example,
})
export const keyParam = pathParam('key', 'the key id, or its 8-character prefix', '3')
export const accountParam = pathParam('account', 'the account name', 'default')
export const notFoundAs = (what: string, example: string) => ({ '404': errors(`No such ${what} (or an unknown path)`, [sentence(example), Msg.notFound]) })
export const accountNotFound = notFoundAs('account', "account 'acme' does not exist (create it with: otpd accounts create acme)")
export const invalidField = (example: string) => ({
  '400': errors('A field that does not fit (the sentence names it)', [...consoleBodyErrors, sentence(example)]),
})

/** The schemas as JSON Schema; a field's 400 sentence (`message`, console/validate.ts) becomes its description. */
export function consoleSchemas(): Record<string, Json> {
  const described = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(described)
    if (node === null || typeof node !== 'object') return node
    const { message, ...rest } = node as Json
    const out = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, described(v)]))
    if (typeof message === 'string' && out.description === undefined) out.description = message
    return out
  }
  return Object.fromEntries(Object.entries(CONSOLE_SCHEMAS).map(([k, v]) => [k, described(plain(v)) as Json]))
}

export const CONSOLE_TAG = {
  name: 'Console',
  description: 'The operator console on the admin listener (server.admin_listen): a session cookie, and a CSRF token on every change.',
}
