/**
 * sessionGate and consolePlugin's extras (console/session-gate.ts,
 * console/plugin.ts): what the console's other modules build on. A plugin
 * given as `signedIn` sits behind the session gate whether or not it uses
 * the guard itself; one given as `open` is reachable without a session.
 */
import { expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { sessionGate } from '../../src/console/session-gate.ts'
import { consoleJson, withSecurityHeaders } from '../../src/console/http.ts'
import { consolePlugin } from '../../src/console/plugin.ts'
import { consoleHarness, OPERATOR } from '../kit/console.ts'
import { closeAfterTest } from '../kit/cleanup.ts'

test('signed-in extras answer only with a session (and the CSRF token to change), with the operator; open extras answer anyone', async () => {
  const h = closeAfterTest(await consoleHarness())
  const s = h.server
  const deps = {
    operators: s.operators,
    admin: s.admin,
    fraud: s.fraud,
    webhooks: s.webhooks,
    storage: s.storage,
    logger: s.logger,
    trustProxy: false,
    config: () => s.config,
  }
  let changed = 0
  const typed = new Elysia({ name: 'typed-extra' })
    .use(sessionGate(deps))
    .get('/console/api/whoami', ({ request, operator }) => consoleJson(request, { status: 200, body: { operator: operator.operator } }))
    .post('/console/api/poke', ({ request, input }) => {
      changed++
      return consoleJson(request, { status: 200, body: { got: input } })
    })
  const untyped = new Elysia({ name: 'untyped-extra' }).get('/console/overview', () =>
    withSecurityHeaders(new Response('<p>overview</p>', { headers: { 'content-type': 'text/html' } })),
  )
  const open = new Elysia({ name: 'open-extra' }).get('/console/assets/app.css', () =>
    withSecurityHeaders(new Response('body{}', { headers: { 'content-type': 'text/css', 'cache-control': 'max-age=3600' } })),
  )
  const app = new Elysia().use(consolePlugin(deps, { signedIn: [typed, untyped], open: [open] }))
  const call = async (path: string, init: RequestInit = {}) => app.handle(new Request(`http://localhost${path}`, init))
  const cookie = { cookie: `otpd_console=${h.session.cookie}` }

  expect((await call('/console/api/whoami')).status).toBe(401)
  expect(await (await call('/console/api/whoami', { headers: cookie })).json()).toMatchObject({ operator: OPERATOR })
  expect((await call('/console/overview')).status).toBe(303)
  expect((await call('/console/overview', { headers: cookie })).status).toBe(200)
  const poke = { method: 'POST', body: JSON.stringify({ a: 1 }) }
  expect((await call('/console/api/poke', { ...poke, headers: { ...cookie, 'content-type': 'application/json' } })).status).toBe(403)
  expect(changed).toBe(0)
  const ok = await call('/console/api/poke', { ...poke, headers: { ...cookie, 'content-type': 'application/json', 'x-csrf-token': h.session.csrf } })
  expect(await ok.json()).toMatchObject({ got: { a: 1 } })
  expect(changed).toBe(1)
  const css = await call('/console/assets/app.css')
  expect(css.status).toBe(200)
  expect(css.headers.get('cache-control')).toBe('max-age=3600')
  expect(css.headers.get('content-security-policy')).toContain("script-src 'self'")
  // The built-in routes are still there.
  expect((await call('/console/api/keys', { headers: cookie })).status).toBe(200)
})
