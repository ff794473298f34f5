/**
 * Keys in the console (docs/console.md#the-json-api): list, create (the
 * key shown once, as `otpd keys create` does), disable, enable, revoke.
 * The same use cases as the CLI (otp/admin.ts), acting as the signed-in
 * operator, so each change is in the audit log; a status change reaches the
 * API's key cache at once (Admin.onKeyChange).
 */
import { Elysia } from 'elysia'
import type { Logger } from '../lib/logger.ts'
import type { Admin } from '../otp/admin.ts'
import type { KeyStatus } from '../otp/types.ts'
import { act, checked, fromForm } from './act.ts'
import { sessionGate, type SessionGateDeps } from './session-gate.ts'
import { API_PATH } from './http.ts'
import { KeyCreateBody } from './models.ts'
import { bodyCheck } from './validate.ts'
import { keyView } from './views.ts'
import { errors, type Json } from '../http/openapi-parts.ts'
import { accountNotFound, signedInOperation, invalidField, KEY_EXAMPLE, keyParam, notFoundAs, queryParam, sentence } from './openapi.ts'

export interface KeyRouteDeps extends SessionGateDeps {
  admin: Admin
  logger: Logger
}

const checkCreate = bodyCheck(KeyCreateBody)
const VERBS: Record<string, KeyStatus> = { disable: 'disabled', enable: 'active', revoke: 'revoked' }

export const KEY_PATHS = {
  [`${API_PATH}/keys`]: ['GET', 'POST'],
  [`${API_PATH}/keys/:id/disable`]: ['POST'],
  [`${API_PATH}/keys/:id/enable`]: ['POST'],
  [`${API_PATH}/keys/:id/revoke`]: ['POST'],
}

export function keyRoutes(deps: KeyRouteDeps) {
  const app = new Elysia({ name: 'console-key-routes' })
    .use(sessionGate(deps))
    .get(`${API_PATH}/keys`, ({ request, query }) =>
      act(deps.logger, request, async () => {
        const account = typeof query.account === 'string' && query.account !== '' ? query.account : undefined
        return { status: 200, body: { keys: (await deps.admin.listKeys(account)).map(keyView) } }
      }),
    )
    .post(`${API_PATH}/keys`, ({ request, input, form, actor }) =>
      act(deps.logger, request, async () => {
        const { value } = checked(checkCreate, fromForm(KeyCreateBody, input, form))
        const k = await deps.admin.as(actor).createKey({ name: value.name, account: value.account })
        return { status: 201, body: { key: k.key, id: k.id, prefix: k.prefix, name: k.name, account: k.account } }
      }),
    )
  for (const [verb, status] of Object.entries(VERBS)) {
    app.post(`${API_PATH}/keys/:id/${verb}`, ({ request, params, actor }) =>
      act(deps.logger, request, async () => ({ status: 200, body: { key: keyView(await deps.admin.as(actor).setKeyStatus(params.id, status)) } })),
    )
  }
  return app
}

const keyStatusOperation = (verb: string, summary: string, conflict: boolean) =>
  signedInOperation({
    id: `console${verb[0]!.toUpperCase()}${verb.slice(1)}Key`,
    summary,
    state: true,
    params: [keyParam],
    ok: [200, 'The key after the change', 'ConsoleKeyResponse', { key: { ...KEY_EXAMPLE, status: verb === 'enable' ? 'active' : `${verb}d` } }],
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

/** The routes' operations in the OpenAPI document (app/openapi.ts assembles them). */
export const keyOperations: Record<string, Json> = {
  '/console/api/keys': {
    get: signedInOperation({
      id: 'consoleListKeys',
      summary: 'API keys (never their values)',
      state: false,
      params: [queryParam('account', 'only keys of this account', { type: 'string' }, 'default')],
      ok: [200, 'The keys', 'ConsoleKeysResponse', { keys: [KEY_EXAMPLE] }],
      more: accountNotFound,
    }),
    post: signedInOperation({
      id: 'consoleCreateKey',
      summary: 'Create a key: its value is in this answer only',
      state: true,
      body: ['ConsoleKeyCreateBody', { name: 'backend', account: 'default' }],
      ok: [201, 'Created', 'ConsoleKeyCreated', { key: 'otpd_Ab3dE9xQ...', id: 3, prefix: 'Ab3dE9xQ', name: 'backend', account: 'default' }],
      more: {
        ...invalidField('name must be a single line of at most 200 characters'),
        ...accountNotFound,
      },
    }),
  },
  '/console/api/keys/{key}/disable': { post: keyStatusOperation('disable', 'Disable a key: the API answers 403 to it at once', false) },
  '/console/api/keys/{key}/enable': { post: keyStatusOperation('enable', 'Enable a disabled key again', true) },
  '/console/api/keys/{key}/revoke': { post: keyStatusOperation('revoke', 'Revoke a key for good: the API answers 401 to it', false) },
}
