/**
 * The console's JSON API as the OpenAPI document describes it (tag
 * Console): real answers of every console operation, success and error,
 * conform to the schema the served document gives for their path, method
 * and status, and carry X-Request-Id.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { check, resolveRef } from '../kit/json-schema.ts'
import { type ConsoleHarness, consoleHarness, OPERATOR, PASSWORD } from '../kit/console.ts'

let h: ConsoleHarness
let doc: Record<string, any>
beforeAll(async () => {
  h = await consoleHarness({ credits: 10 })
  doc = (await (await h.server.http.handle(new Request('http://localhost/api/v1/openapi.json'))).json()) as Record<string, any>
})
afterAll(() => h?.close())

const resolve = (node: Record<string, any>) => resolveRef(doc, node)

const seen = new Set<string>()

async function conforms(docPath: string, method: string, r: { status: number; json: unknown; headers: Headers }) {
  const op = doc.paths[docPath]?.[method]
  expect(op, `${method} ${docPath} is documented`).toBeDefined()
  expect(op.tags).toEqual(['Console'])
  const res = op.responses[String(r.status)]
  expect(res, `${method} ${docPath} documents ${r.status}`).toBeDefined()
  const problems = check(resolve(res).content['application/json'].schema, r.json, doc)
  expect(problems, `${method} ${docPath} ${r.status} ${JSON.stringify(r.json)}`).toEqual([])
  expect(r.headers.get('x-request-id')).toBe((r.json as { request_id: string }).request_id)
  seen.add(`${method} ${docPath} ${r.status}`)
}

test('every console operation: its answers are what the document says', async () => {
  const s = '/console/api/session'
  await conforms(s, 'post', await h.admin(s, { body: { name: OPERATOR, password: PASSWORD }, session: null }))
  await conforms(s, 'post', await h.admin(s, { body: { name: OPERATOR }, session: null }))
  for (let i = 0; i < 5; i++) await conforms(s, 'post', await h.admin(s, { body: { name: 'other', password: 'not the password' }, session: null }))
  await conforms(s, 'post', await h.admin(s, { body: { name: 'other', password: 'not the password' }, session: null }))
  await conforms(s, 'get', await h.admin(s))
  await conforms(s, 'get', await h.admin(s, { session: null }))
  await conforms(s, 'delete', await h.admin(s, { method: 'DELETE', csrf: null }))

  const created = await h.admin('/console/api/keys', { body: { name: 'doc' } })
  await conforms('/console/api/keys', 'post', created)
  await conforms('/console/api/keys', 'post', await h.admin('/console/api/keys', { body: { name: 'x'.repeat(201) } }))
  await conforms('/console/api/keys', 'get', await h.admin('/console/api/keys'))
  await conforms('/console/api/keys', 'get', await h.admin('/console/api/keys?account=nobody'))
  await conforms('/console/api/keys/{key}/disable', 'post', await h.admin(`/console/api/keys/${created.json.id}/disable`, { method: 'POST' }))
  await conforms('/console/api/keys/{key}/disable', 'post', await h.admin('/console/api/keys/99999/disable', { method: 'POST' }))
  await conforms('/console/api/keys/{key}/enable', 'post', await h.admin(`/console/api/keys/${created.json.id}/enable`, { method: 'POST' }))
  await conforms('/console/api/keys/{key}/revoke', 'post', await h.admin(`/console/api/keys/${created.json.id}/revoke`, { method: 'POST' }))
  await conforms('/console/api/keys/{key}/enable', 'post', await h.admin(`/console/api/keys/${created.json.id}/enable`, { method: 'POST' }))

  await conforms('/console/api/accounts', 'get', await h.admin('/console/api/accounts'))
  const a = '/console/api/accounts/{account}'
  await conforms(a, 'get', await h.admin('/console/api/accounts/default'))
  await conforms(a, 'get', await h.admin('/console/api/accounts/nobody'))
  await conforms(a, 'patch', await h.admin('/console/api/accounts/default', { method: 'PATCH', body: { countries: ['US'], daily_credit_limit: 50 } }))
  await conforms(a, 'patch', await h.admin('/console/api/accounts/default', { method: 'PATCH', body: { countries: ['XX'] } }))
  await conforms(a, 'patch', await h.admin('/console/api/accounts/default', { method: 'PATCH', body: { test_recipients: true }, csrf: null }))
  await conforms(`${a}/credits/add`, 'post', await h.admin('/console/api/accounts/default/credits/add', { body: { amount: 5, note: 'doc' } }))
  await conforms(`${a}/credits/add`, 'post', await h.admin('/console/api/accounts/default/credits/add', { body: { amount: -5 } }))
  await conforms(`${a}/credits/deduct`, 'post', await h.admin('/console/api/accounts/default/credits/deduct', { body: { amount: 1 } }))
  await conforms(`${a}/credits/deduct`, 'post', await h.admin('/console/api/accounts/default/credits/deduct', { body: { amount: 1_000_000 } }))
  await conforms(`${a}/ledger`, 'get', await h.admin('/console/api/accounts/default/ledger?limit=5'))
  await conforms(`${a}/ledger`, 'get', await h.admin('/console/api/accounts/default/ledger?limit=0'))

  await conforms('/console/api/fraud/unblock', 'post', await h.admin('/console/api/fraud/unblock', { body: { scope: 'UZ' } }))
  await conforms('/console/api/fraud/unblock', 'post', await h.admin('/console/api/fraud/unblock', { body: { scope: 'UZZ' } }))
  await conforms('/console/api/events/{event_id}/replay', 'post', await h.admin('/console/api/events/none/replay', { method: 'POST' }))
  await h.server.webhooks.add({ url: 'http://127.0.0.1:9/hooks' })
  await h.send({ channel: 'email', recipient: 'someone@example.com' })
  await h.server.storage.settled()
  const [event] = await h.server.webhooks.events({})
  await conforms('/console/api/events/{event_id}/replay', 'post', await h.admin(`/console/api/events/${event!.id}/replay`, { method: 'POST' }))
  await conforms('/console/api/audit', 'get', await h.admin('/console/api/audit?limit=3'))
  await conforms('/console/api/audit', 'get', await h.admin('/console/api/audit?action=x'))
  await conforms('/console/api/audit', 'get', await h.admin('/console/api/audit', { session: null }))

  const q = '/console/api/verifications/search'
  await conforms(q, 'post', await h.admin(q, { body: { recipient: 'someone@example.com', limit: 5 } }))
  await conforms(q, 'post', await h.admin(q, { body: { recipient: 'hello' } }))
  await conforms(q, 'post', await h.admin(q, { body: { recipient: '+14155550123', account: 'nobody' } }))
  for (let i = 0; i < 29; i++) await h.admin(q, { body: { recipient: '+14155550123' } })
  await conforms(q, 'post', await h.admin(q, { body: { recipient: '+14155550123' } }))

  await conforms(s, 'delete', await h.admin(s, { method: 'DELETE' }))

  // 405 on a known path, as the document says of every operation.
  const wrong = await h.admin('/console/api/audit', { method: 'DELETE' })
  expect(wrong.status).toBe(405)
  expect(check(doc.components.responses.MethodNotAllowed.content['application/json'].schema, wrong.json, doc)).toEqual([])
  // Every console operation had at least its success drawn.
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
    if (!path.startsWith('/console/')) continue
    for (const method of Object.keys(item)) {
      const ok = Object.keys(item[method].responses).find((st) => st.startsWith('2'))
      expect(seen.has(`${method} ${path} ${ok}`), `${method} ${path} ${ok} drawn`).toBe(true)
    }
  }
}, 60_000)
