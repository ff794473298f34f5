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
import { consoleGuard, type ConsoleGuardDeps } from './guard.ts'
import { API_PATH } from './http.ts'
import { KeyCreateBody } from './models.ts'
import { bodyCheck } from './validate.ts'
import { keyView } from './views.ts'

export interface KeyRouteDeps extends ConsoleGuardDeps {
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
    .use(consoleGuard(deps))
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
