/**
 * Roles (docs/console.md#roles): a `viewer` reads only. Every state-changing
 * route the admin listener has, found by enumerating its routes (so a route
 * added later is covered too), answers a viewer 403 with one clear message
 * and changes nothing; the searches and signing out are the only bodies a
 * viewer may send. An admin's role taken away applies at its next request.
 */
import { expect, test } from 'bun:test'
import { READS_BY_POST } from '../../src/console/session-gate.ts'
import { closeAfterTest } from '../kit/cleanup.ts'
import { type ConsoleHarness, consoleHarness, OPERATOR } from '../kit/console.ts'

const VIEWER = 'ops-viewer'
const VIEWER_PASSWORD = 'a viewer password'
const VIEWER_REFUSED = `Operator '${VIEWER}' has the viewer role, which reads only: an admin can change it with otpd operators set ${VIEWER} --role admin`
/** Sign-in needs no session, so no role. */
const OPEN = new Set(['POST /console/sign-in', 'POST /console/api/session'])

async function harness(): Promise<ConsoleHarness> {
  const h = closeAfterTest(await consoleHarness())
  await h.server.operators.add(VIEWER, VIEWER_PASSWORD, 'viewer')
  return h
}

/** Every state-changing console route: method and path, with its parameters filled in. */
function stateChangingRoutes(h: ConsoleHarness): { method: string; path: string; route: string }[] {
  const out = []
  for (const r of h.server.adminHttp.routes) {
    if (['GET', 'HEAD', 'ALL'].includes(r.method) || !r.path.startsWith('/console')) continue
    const route = `${r.method} ${r.path}`
    if (OPEN.has(route)) continue
    out.push({ method: r.method, path: r.path.replace(':name', 'default').replace(':id', '1'), route })
  }
  return out
}

test('a viewer is refused (403, one message) on every state-changing route, and nothing changes', async () => {
  const h = await harness()
  const viewer = await h.signIn(VIEWER, VIEWER_PASSWORD)
  const routes = stateChangingRoutes(h).filter((r) => !READS_BY_POST.has(r.route))
  expect(routes.length).toBeGreaterThanOrEqual(15)
  const before = { audit: await h.sql('SELECT count(*) AS n FROM audit_log'), keys: await h.sql('SELECT count(*) AS n FROM api_keys') }
  const body = { name: 'k', account: 'default', amount: 5, note: 'n', scope: 'UZ', countries: ['US'], daily_credit_limit: 1, op: 'add' }
  for (const r of routes) {
    const api = r.path.startsWith('/console/api/')
    const res = await h.admin(r.path, { method: r.method, session: viewer, body: api ? body : { ...body, _csrf: viewer.csrf }, form: !api })
    expect({ route: r.route, status: res.status, error: res.json.error }).toEqual({ route: r.route, status: 403, error: VIEWER_REFUSED })
  }
  expect(await h.sql('SELECT count(*) AS n FROM audit_log')).toEqual(before.audit)
  expect(await h.sql('SELECT count(*) AS n FROM api_keys')).toEqual(before.keys)
  // The same routes are open to an admin (not refused for the role).
  for (const r of routes) {
    const api = r.path.startsWith('/console/api/')
    const res = await h.admin(r.path, { method: r.method, body: api ? body : { ...body, _csrf: h.session.csrf }, form: !api })
    expect({ route: r.route, refused: res.status === 403 }).toEqual({ route: r.route, refused: false })
  }
})

test('a viewer reads every page and searches; signing out is allowed', async () => {
  const h = await harness()
  const viewer = await h.signIn(VIEWER, VIEWER_PASSWORD)
  for (const path of ['/console/', '/console/verifications', '/console/keys', '/console/audit', '/console/api/keys', '/console/api/accounts']) {
    expect({ path, status: (await h.admin(path, { session: viewer })).status }).toEqual({ path, status: 200 })
  }
  expect((await h.admin('/console/keys', { session: viewer })).text).toContain(`<strong>${VIEWER} (viewer: reads only)</strong>`)
  const search = await h.admin('/console/api/verifications/search', { session: viewer, body: { recipient: '+14155550123' } })
  expect(search.status).toBe(200)
  expect((await h.admin('/console/api/session', { method: 'DELETE', session: viewer })).status).toBe(200)
  expect((await h.admin('/console/api/session', { session: viewer })).status).toBe(401)
})

test('a role change applies to the operator sessions at their next request, and is in the audit log', async () => {
  const h = await harness()
  expect((await h.admin('/console/api/keys', { body: { name: 'shop' } })).status).toBe(201)
  await h.server.operators.as({ operator: 'root', source: 'cli' }).setRole(OPERATOR, 'viewer')
  const refused = await h.admin('/console/api/keys', { body: { name: 'shop' } })
  expect(refused.status).toBe(403)
  expect(refused.json.error).toContain(`Operator '${OPERATOR}' has the viewer role`)
  const audit = await h.admin('/console/api/audit?action=operator.role_changed')
  expect(audit.json.entries).toEqual([expect.objectContaining({ operator: 'root', subject: `operator ${OPERATOR}`, details: { from: 'admin', to: 'viewer' } })])
})
