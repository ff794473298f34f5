/**
 * The console's JSON API in the OpenAPI document (http/openapi.ts merges
 * it): its own tag "Console", a cookie security scheme (the session) and a
 * header one (the CSRF token, on every state-changing operation).
 */
import { Type as T, type TSchema } from '@sinclair/typebox'
import { Msg } from '../http/messages.ts'
import { errors, type Json, type Message, methodNotAllowed, notFound, plain, REQUEST_ID, ref, response } from '../http/openapi-parts.ts'
import { AUDIT_ACTIONS, AUDIT_PAGE_MAX } from '../otp/audit.ts'
import { SESSION_COOKIE } from './http.ts'
import { ConsoleMsg, SIGN_IN_LIMITED_PATTERN } from './messages.ts'
import * as M from './models.ts'

const TAG = ['Console']
const AT = '2026-01-01T12:05:00.000Z'
const CSRF = '3f1e0c9a7b5d4c2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e'

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
}

export const CONSOLE_SECURITY_SCHEMES = {
  consoleSession: {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description: 'The session cookie POST /console/api/session sets (HttpOnly, SameSite=Strict, Path=/console; 12 h idle expiry).',
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
const sentence = (example: string): TSchema => T.String({ minLength: 1, examples: [example] })
const bodyErrors: Message[] = [ConsoleMsg.contentType, Msg.invalidJson, Msg.notObject]
const read = [{ consoleSession: [] }]
const change = [{ consoleSession: [], consoleCsrf: [] }]

const key = { id: 3, prefix: 'Ab3dE9xQ', name: 'backend', account: 'default', status: 'active', created_at: AT, last_used_at: null }
const account = {
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

function guarded(o: {
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
    '401': errors('No session, or it ended (12 h idle, signed out, operator disabled or password reset)', [ConsoleMsg.signInRequired]),
    ...(o.state ? { '403': errors('No CSRF token, or a wrong one: nothing changed', [ConsoleMsg.csrf]) } : {}),
    '404': notFound,
    ...methodNotAllowed,
    ...(o.more ?? {}),
    '500': errors('Internal fault', [Msg.internal]),
  }
  if (o.state && o.body === undefined && responses['400'] === undefined) responses['400'] = errors('A body that is not JSON or a form', bodyErrors)
  const op: Json = { operationId: o.id, tags: TAG, summary: o.summary, security: o.state ? change : read, responses }
  if (o.params) op.parameters = o.params
  if (o.body) op.requestBody = { required: true, content: { 'application/json': { schema: ref(o.body[0]), example: o.body[1] } } }
  return op
}

const path = (name: string, description: string, example: string) => ({ name, in: 'path', required: true, description, schema: { type: 'string' }, example })
const query = (name: string, description: string, schema: Json, example: unknown) => ({ name, in: 'query', required: false, description, schema, example })
const keyRef = path('key', 'the key id, or its 8-character prefix', '3')
const accountName = path('account', 'the account name', 'default')
const notFoundAs = (what: string, example: string) => ({ '404': errors(`No such ${what} (or an unknown path)`, [sentence(example), Msg.notFound]) })
const invalid = (example: string) => ({ '400': errors('A field that does not fit (the sentence names it)', [...bodyErrors, sentence(example)]) })

export function consolePaths(): Record<string, Json> {
  const keyStatus = (verb: string, summary: string, conflict: boolean) =>
    guarded({
      id: `console${verb[0]!.toUpperCase()}${verb.slice(1)}Key`,
      summary,
      state: true,
      params: [keyRef],
      ok: [200, 'The key after the change', 'ConsoleKeyResponse', { key: { ...key, status: verb === 'enable' ? 'active' : `${verb}d` } }],
      more: {
        ...notFoundAs('key', "no key has id or prefix '99' (see: otpd keys list)"),
        ...(conflict
          ? {
              '409': errors('The key is revoked: it cannot be changed', [
                sentence('key 3 (Ab3dE9xQ) is revoked and cannot be changed; create a new key instead'),
              ]),
            }
          : {}),
      },
    })
  return {
    '/console/api/session': {
      post: {
        operationId: 'consoleSignIn',
        tags: TAG,
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
              csrf_token: CSRF,
              request_id: REQUEST_ID,
            }),
          },
          '400': errors('A bad body', [...bodyErrors, sentence('password is required')]),
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
      get: guarded({
        id: 'consoleSession',
        summary: 'The signed-in operator and the CSRF token',
        state: false,
        ok: [200, 'Signed in', 'ConsoleSessionResponse', { operator: 'alice', csrf_token: CSRF }],
      }),
      delete: guarded({
        id: 'consoleSignOut',
        summary: 'Sign out: the session ends',
        state: true,
        ok: [200, 'Signed out; the cookie is cleared', 'ConsoleSignedOutResponse', { signed_out: true }],
      }),
    },
    '/console/api/keys': {
      get: guarded({
        id: 'consoleListKeys',
        summary: 'API keys (never their values)',
        state: false,
        params: [query('account', 'only keys of this account', { type: 'string' }, 'default')],
        ok: [200, 'The keys', 'ConsoleKeysResponse', { keys: [key] }],
        more: notFoundAs('account', "account 'acme' does not exist (create it with: otpd accounts create acme)"),
      }),
      post: guarded({
        id: 'consoleCreateKey',
        summary: 'Create a key: its value is in this answer only',
        state: true,
        body: ['ConsoleKeyCreateBody', { name: 'backend', account: 'default' }],
        ok: [201, 'Created', 'ConsoleKeyCreated', { key: 'otpd_Ab3dE9xQ...', id: 3, prefix: 'Ab3dE9xQ', name: 'backend', account: 'default' }],
        more: {
          ...invalid('name must be a single line of at most 200 characters'),
          ...notFoundAs('account', "account 'acme' does not exist (create it with: otpd accounts create acme)"),
        },
      }),
    },
    '/console/api/keys/{key}/disable': { post: keyStatus('disable', 'Disable a key: the API answers 403 to it at once', false) },
    '/console/api/keys/{key}/enable': { post: keyStatus('enable', 'Enable a disabled key again', true) },
    '/console/api/keys/{key}/revoke': { post: keyStatus('revoke', 'Revoke a key for good: the API answers 401 to it', false) },
    '/console/api/accounts': {
      get: guarded({
        id: 'consoleListAccounts',
        summary: 'Accounts with balance and settings',
        state: false,
        ok: [200, 'The accounts', 'ConsoleAccountsResponse', { accounts: [account] }],
      }),
    },
    '/console/api/accounts/{account}': {
      get: guarded({
        id: 'consoleAccount',
        summary: 'One account with balance and settings',
        state: false,
        params: [accountName],
        ok: [200, 'The account', 'ConsoleAccountResponse', { account }],
        more: notFoundAs('account', "account 'acme' does not exist (create it with: otpd accounts create acme)"),
      }),
      patch: guarded({
        id: 'consoleChangeAccount',
        summary: "Change an account's settings: countries, daily credit cap, test recipients, code length",
        state: true,
        params: [accountName],
        body: ['ConsoleAccountSettingsBody', { countries: ['US', 'CA'], daily_credit_limit: 5000 }],
        ok: [
          200,
          'The account after the change',
          'ConsoleAccountResponse',
          { account: { ...account, countries: ['US', 'CA'], countries_are_default: false, daily_credit_limit: 5000 } },
        ],
        more: {
          ...invalid('unknown country code XX: use ISO 3166-1 alpha-2 codes'),
          ...notFoundAs('account', "account 'acme' does not exist (create it with: otpd accounts create acme)"),
        },
      }),
    },
    '/console/api/accounts/{account}/credits/add': {
      post: guarded({
        id: 'consoleAddCredits',
        summary: 'Add credits, with a note kept in the ledger and the audit log',
        state: true,
        params: [accountName],
        body: ['ConsoleCreditsBody', { amount: 1000, note: 'invoice 42' }],
        ok: [200, 'The new balance', 'ConsoleCreditsResult', { account: 'default', balance: 1950 }],
        more: {
          ...invalid('amount must be a whole number from 1 to 1000000000'),
          ...notFoundAs('account', "account 'acme' does not exist (create it with: otpd accounts create acme)"),
        },
      }),
    },
    '/console/api/accounts/{account}/credits/deduct': {
      post: guarded({
        id: 'consoleDeductCredits',
        summary: 'Deduct credits (a correction), never below zero',
        state: true,
        params: [accountName],
        body: ['ConsoleCreditsBody', { amount: 5, note: 'double grant' }],
        ok: [200, 'The new balance', 'ConsoleCreditsResult', { account: 'default', balance: 945 }],
        more: {
          ...invalid('amount must be a whole number from 1 to 1000000000'),
          ...notFoundAs('account', "account 'acme' does not exist (create it with: otpd accounts create acme)"),
          '409': errors('The balance does not cover it: nothing changed', [sentence("cannot deduct 5 credits: account 'default' has only 3")]),
        },
      }),
    },
    '/console/api/accounts/{account}/ledger': {
      get: guarded({
        id: 'consoleLedger',
        summary: "An account's ledger, newest first",
        state: false,
        params: [accountName, query('limit', 'at most this many entries (1-1000, default 50)', { type: 'integer', minimum: 1, maximum: 1000 }, 50)],
        ok: [
          200,
          'The ledger',
          'ConsoleLedgerResponse',
          { account: 'default', balance: 945, entries: [{ id: 7, created_at: AT, kind: 'grant', amount: 1000, verification_id: null, note: 'invoice 42' }] },
        ],
        more: {
          '400': errors('A bad limit', [sentence('limit must be a whole number from 1 to 1000')]),
          ...notFoundAs('account', "account 'acme' does not exist (create it with: otpd accounts create acme)"),
        },
      }),
    },
    '/console/api/fraud/unblock': {
      post: guarded({
        id: 'consoleUnblock',
        summary: 'Lift a fraud guard block of a country or prefix, reset its escalation, count its conversion from now',
        state: true,
        body: ['ConsoleUnblockBody', { scope: 'UZ', account: 'default' }],
        ok: [
          200,
          'Unblocked (was_blocked: whether a block was in force)',
          'ConsoleUnblockResult',
          { account: 'default', scope_kind: 'country', scope: 'UZ', was_blocked: true },
        ],
        more: {
          ...invalid("'UZZ' is not a scope: give a country code (UZ) or a prefix (+99890123)"),
          ...notFoundAs('account', "account 'acme' does not exist (create it with: otpd accounts create acme)"),
        },
      }),
    },
    '/console/api/events/{event_id}/replay': {
      post: guarded({
        id: 'consoleReplayEvent',
        summary: 'Send an event again (same id and body) to the endpoints subscribed to it',
        state: true,
        params: [path('event_id', 'the event id', '0b6c3c52-5a0e-4a43-9d87-2f1f6f0f5b0e')],
        ok: [
          200,
          'Rearmed; deliveries: how many endpoints get it',
          'ConsoleReplayResult',
          { id: '0b6c3c52-5a0e-4a43-9d87-2f1f6f0f5b0e', type: 'verification.approved', deliveries: 1 },
        ],
        more: notFoundAs('event', "no event has id 'x' (see: otpd events list)"),
      }),
    },
    '/console/api/audit': {
      get: guarded({
        id: 'consoleAudit',
        summary: 'The audit log, newest first',
        state: false,
        params: [
          query('since', 'at or after: ISO 8601, or ms since the epoch', { type: 'string' }, '2026-01-01T00:00:00Z'),
          query('until', 'before: ISO 8601, or ms since the epoch', { type: 'string' }, '2026-01-02T00:00:00Z'),
          query('action', 'only this action', { type: 'string', enum: [...AUDIT_ACTIONS] }, 'credits.added'),
          query('operator', 'only this operator (or CLI user)', { type: 'string' }, 'alice'),
          query('before_id', 'entries older than this id (the next page)', { type: 'integer', minimum: 1 }, 120),
          query('limit', `at most this many (1-${AUDIT_PAGE_MAX}, default 100)`, { type: 'integer', minimum: 1, maximum: AUDIT_PAGE_MAX }, 100),
        ],
        ok: [
          200,
          'Entries',
          'ConsoleAuditResponse',
          {
            entries: [
              {
                id: 120,
                at: AT,
                operator: 'alice',
                source: 'console',
                action: 'credits.added',
                subject: 'account default',
                details: { amount: 1000, note: 'invoice 42', balance: 1950 },
              },
            ],
            next_before_id: null,
          },
        ],
        more: { '400': errors('A bad filter', [sentence("unknown audit action 'x'; known actions: ...")]) },
      }),
    },
  }
}

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
