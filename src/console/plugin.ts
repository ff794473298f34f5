/**
 * The operator console (docs/console.md): one Elysia plugin mounted on the admin
 * listener only, never on the API listener; pages under /console/, their JSON
 * under /console/api/. `consolePlugin(deps, { signedIn, open })` puts the sign-in
 * routes and `open` (assets the sign-in page needs) in the open, and every other
 * route behind the session gate (console/session-gate.ts). Every answer goes through
 * console/http.ts (withSecurityHeaders, consoleJson) for the console's headers.
 */
import { type AnyElysia, Elysia } from 'elysia'
import { Msg } from '../http/error-texts.ts'
import type { Admin } from '../otp/admin.ts'
import type { FraudAdmin } from '../otp/fraud-admin.ts'
import type { Storage } from '../otp/ports/index.ts'
import type { Webhooks } from '../otp/webhooks.ts'
import type { Config } from '../config/schema.ts'
import { consoleAssets } from './assets.ts'
import { ACCOUNT_PATHS, accountRoutes } from './account-routes.ts'
import { ACTION_PATHS, actionRoutes } from './action-routes.ts'
import { sessionGate } from './session-gate.ts'
import { CONSOLE_PATH, consoleError } from './http.ts'
import { KEY_PATHS, keyRoutes } from './key-routes.ts'
import { sessionRoutes, type SessionRouteDeps } from './session-routes.ts'

export interface ConsoleDeps extends SessionRouteDeps {
  admin: Admin
  fraud: FraudAdmin
  webhooks: Webhooks
  storage: Storage
  /** The config in force (a reload may change it). */
  config(): Config
}

/** Every path of the console's JSON API with the methods it answers (the others answer 405). */
export const CONSOLE_API_METHODS: Record<string, string[]> = {
  '/console/api/session': ['GET', 'POST', 'DELETE'],
  '/console/api/verifications/search': ['POST'],
  ...KEY_PATHS,
  ...ACCOUNT_PATHS,
  ...ACTION_PATHS,
}

export interface ConsoleExtras {
  /** Routes behind the session gate (read routes, pages). */
  signedIn?: AnyElysia[]
  /** Routes any visitor may reach (the sign-in page's assets): nothing with data. */
  open?: AnyElysia[]
}

export function consolePlugin(deps: ConsoleDeps, extras: ConsoleExtras = {}) {
  const signedIn = new Elysia({ name: 'console-signed-in' }).use(sessionGate(deps)).use(keyRoutes(deps)).use(accountRoutes(deps)).use(actionRoutes(deps))
  for (const plugin of extras.signedIn ?? []) signedIn.use(plugin)
  // The assets are open: the sign-in page needs its styles.
  const app = new Elysia({ name: 'console' }).use(consoleAssets()).use(sessionRoutes(deps))
  for (const plugin of extras.open ?? []) app.use(plugin)
  app.use(signedIn)
  for (const [path, methods] of Object.entries(CONSOLE_API_METHODS)) {
    app.all(
      path,
      ({ request }) => (methods.includes(request.method) ? consoleError(request, 404, Msg.notFound) : consoleError(request, 405, Msg.methodNotAllowed)),
      {
        parse: 'none',
      },
    )
  }
  // Any other path under /console/: 404 with the console's headers.
  app.all(`${CONSOLE_PATH}/*`, ({ request }) => consoleError(request, 404, Msg.notFound), { parse: 'none' })
  return app
}
