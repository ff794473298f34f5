/**
 * The console's actions (docs/console.md#the-json-api): keys, account
 * settings, credits, fraud unblock, event replay and the audit log, each
 * through the same use case as the CLI and each written to the audit log as
 * the signed-in operator's, with source `console`. Every state-changing
 * endpoint answers 401 without a session and 403 without the CSRF token,
 * changing nothing.
 */
import { expect, test } from 'bun:test'
import { type ConsoleHarness, consoleHarness, OPERATOR } from '../kit/console.ts'
import { TEST } from '../kit/harness.ts'
import { closeAfterTest } from '../kit/cleanup.ts'

async function harness(credits = 0): Promise<ConsoleHarness> {
  const h = closeAfterTest(await consoleHarness({ credits }))
  return h
}

/** The audit log as the console reads it, newest first. */
async function auditOf(h: ConsoleHarness, query = ''): Promise<Record<string, any>[]> {
  const r = await h.admin(`/console/api/audit${query}`)
  expect(r.status).toBe(200)
  return r.json.entries
}

test('a key created in the console is shown once, works against the API, and is refused at once when disabled, then revoked', async () => {
  const h = await harness(10)
  const created = await h.admin('/console/api/keys', { body: { name: 'shop backend' } })
  expect(created.status).toBe(201)
  const key = created.json.key as string
  expect(created.json).toMatchObject({ name: 'shop backend', account: 'default', prefix: key.slice(5, 13) })
  // Listed without its value.
  const list = await h.admin('/console/api/keys')
  expect(list.text).not.toContain(key)
  expect(list.json.keys.find((k: { id: number }) => k.id === created.json.id)).toMatchObject({ status: 'active', name: 'shop backend' })

  expect((await h.send({ channel: 'email', recipient: TEST.EMAIL_SUCCESS }, key)).status).toBe(200)
  const started = performance.now()
  expect((await h.admin(`/console/api/keys/${created.json.id}/disable`, { method: 'POST' })).json.key.status).toBe('disabled')
  const refused = await h.send({ channel: 'email', recipient: TEST.EMAIL_SUCCESS }, key)
  expect(performance.now() - started).toBeLessThan(1000)
  expect(refused.status).toBe(403)
  expect(refused.json.error).toBe('API key is disabled')
  await h.admin(`/console/api/keys/${created.json.id}/enable`, { method: 'POST' })
  expect((await h.send({ channel: 'email', recipient: TEST.EMAIL_SUCCESS }, key)).status).toBe(200)
  await h.admin(`/console/api/keys/${created.json.prefix}/revoke`, { method: 'POST' })
  expect((await h.send({ channel: 'email', recipient: TEST.EMAIL_SUCCESS }, key)).status).toBe(401)
  const again = await h.admin(`/console/api/keys/${created.json.id}/enable`, { method: 'POST' })
  expect(again.status).toBe(409)
  expect(again.json.error).toContain('is revoked and cannot be changed')
  expect((await h.admin('/console/api/keys/999999/disable', { method: 'POST' })).status).toBe(404)

  const entries = await auditOf(h)
  expect(entries.map((e) => [e.action, e.subject, e.operator, e.source])).toEqual([
    ['key.revoked', `key ${created.json.id}`, OPERATOR, 'console'],
    ['key.enabled', `key ${created.json.id}`, OPERATOR, 'console'],
    ['key.disabled', `key ${created.json.id}`, OPERATOR, 'console'],
    ['key.created', `key ${created.json.id}`, OPERATOR, 'console'],
  ])
  // The key itself never reaches the audit log.
  expect(JSON.stringify(entries)).not.toContain(key)
})

test('a key can be created from an HTML form (fields as text, _csrf in the body)', async () => {
  const h = await harness()
  const r = await h.admin('/console/api/keys', { body: { name: 'from a form', _csrf: h.session.csrf }, form: true, csrf: null })
  expect(r.status).toBe(201)
  expect(r.json.name).toBe('from a form')
})

test('accounts: listed with balance and settings; a settings change is applied and audited with before and after', async () => {
  const h = await harness(7)
  const before = await h.admin('/console/api/accounts')
  expect(before.json.accounts).toEqual([
    {
      name: 'default',
      balance: 7,
      code_length: 6,
      code_length_is_default: true,
      countries: ['*'],
      countries_are_default: true,
      daily_credit_limit: null,
      test_recipients: true,
      created_at: expect.any(String),
    },
  ])
  const r = await h.admin('/console/api/accounts/default', {
    method: 'PATCH',
    body: { countries: ['US', 'CA'], daily_credit_limit: 500, test_recipients: false, code_length: 8 },
  })
  expect(r.status).toBe(200)
  expect(r.json.account).toMatchObject({
    countries: ['US', 'CA'],
    countries_are_default: false,
    daily_credit_limit: 500,
    test_recipients: false,
    code_length: 8,
  })
  expect((await h.server.fraud.account('default')).allowedCountries).toEqual(['US', 'CA'])
  const back = await h.admin('/console/api/accounts/default', { method: 'PATCH', body: { countries: null, daily_credit_limit: null } })
  expect(back.json.account).toMatchObject({ countries: ['*'], countries_are_default: true, daily_credit_limit: null })
  const entries = await auditOf(h)
  expect(entries.map((e) => e.action)).toEqual(['account.settings_changed', 'account.settings_changed', 'account.code_length_changed'])
  expect(entries[1]!.details).toEqual({
    allowedCountries: { from: null, to: ['US', 'CA'] },
    dailyCreditLimit: { from: null, to: 500 },
    testRecipients: { from: true, to: false },
  })
  expect(entries[2]!.details).toEqual({ from: null, to: 8 })
})

test('account settings: each bad field is a 400 naming it, an unknown account a 404, and nothing changes', async () => {
  const h = await harness()
  const cases: [Record<string, unknown>, string][] = [
    [
      { countries: 'US' },
      "countries must be a list of ISO 3166-1 alpha-2 codes (['US','CA']), ['*'] for every country, or null for the config's fraud.allowed_countries",
    ],
    [{ countries: ['XX'] }, 'unknown country code XX'],
    [{ daily_credit_limit: 0 }, 'daily_credit_limit must be a whole number of at least 1, or null for none'],
    [{ test_recipients: 'yes' }, 'test_recipients must be true or false'],
    [{ code_length: 3 }, 'code_length must be a whole number from 4 to 10'],
    [{ colour: 'red' }, "unknown field 'colour'"],
    [{}, 'nothing to change: give countries, daily_credit_limit, test_recipients or code_length'],
  ]
  for (const [body, error] of cases) {
    const r = await h.admin('/console/api/accounts/default', { method: 'PATCH', body })
    expect({ body, status: r.status }).toEqual({ body, status: 400 })
    expect(r.json.error).toContain(error)
  }
  expect((await h.admin('/console/api/accounts/nobody', { method: 'PATCH', body: { test_recipients: false } })).status).toBe(404)
  expect((await h.admin('/console/api/accounts/nobody')).status).toBe(404)
  expect(await auditOf(h)).toEqual([])
})

test('credits added and deducted with a note: in the ledger and in the audit log; a deduction past the balance is refused', async () => {
  const h = await harness()
  const add = await h.admin('/console/api/accounts/default/credits/add', { body: { amount: 100, note: 'invoice 42' } })
  expect(add.json).toMatchObject({ account: 'default', balance: 100 })
  const deduct = await h.admin('/console/api/accounts/default/credits/deduct', { body: { amount: 30, note: 'double grant' } })
  expect(deduct.json).toMatchObject({ account: 'default', balance: 70 })
  const over = await h.admin('/console/api/accounts/default/credits/deduct', { body: { amount: 71, note: 'too much' } })
  expect(over.status).toBe(409)
  expect(over.json.error).toBe("cannot deduct 71 credits: account 'default' has only 70")
  for (const [body, error] of [
    [{ amount: 0 }, 'amount must be a whole number from 1 to 1000000000'],
    [{ amount: '5' }, 'amount must be a whole number from 1 to 1000000000'],
    [{ note: 'x' }, 'amount is required'],
  ] as const) {
    const r = await h.admin('/console/api/accounts/default/credits/add', { body })
    expect({ status: r.status, error: r.json.error }).toEqual({ status: 400, error })
  }
  const ledger = await h.admin('/console/api/accounts/default/ledger')
  expect(ledger.json.balance).toBe(70)
  expect(ledger.json.entries.map((e: Record<string, unknown>) => [e.kind, e.amount, e.note])).toEqual([
    ['debit', -30, 'double grant'],
    ['grant', 100, 'invoice 42'],
  ])
  const entries = await auditOf(h)
  expect(entries.map((e) => [e.action, e.subject, e.details])).toEqual([
    ['credits.deducted', 'account default', { amount: 30, note: 'double grant', balance: 70 }],
    ['credits.added', 'account default', { amount: 100, note: 'invoice 42', balance: 100 }],
  ])
  // A form's amount is text.
  const form = await h.admin('/console/api/accounts/default/credits/add', { body: { amount: '5', note: '', _csrf: h.session.csrf }, form: true, csrf: null })
  expect(form.json.balance).toBe(75)
})

test('a fraud block lifted in the console is audited with whether it was in force', async () => {
  const h = await harness()
  const now = h.clock.now()
  await h.server.storage.write((r) =>
    r.fraud.saveBlock({ accountId: 1, kind: 'country', scope: 'UZ', startedAt: now, until: now + 900_000, level: 0, countsFrom: 0 }),
  )
  expect((await h.server.fraud.status()).blocks.length).toBe(1)
  const r = await h.admin('/console/api/fraud/unblock', { body: { scope: 'uz' } })
  expect(r.json).toMatchObject({ account: 'default', scope_kind: 'country', scope: 'UZ', was_blocked: true })
  expect((await h.server.fraud.status()).blocks).toEqual([])
  const bad = await h.admin('/console/api/fraud/unblock', { body: { scope: 'nowhere' } })
  expect(bad.status).toBe(400)
  expect((await auditOf(h)).map((e) => [e.action, e.subject, e.details])).toEqual([
    ['fraud.unblocked', 'country UZ', { account: 'default', was_blocked: true, level: 0 }],
  ])
})

test('an event replayed in the console is rearmed and audited; an unknown event is a 404', async () => {
  const h = await harness(5)
  await h.server.webhooks.add({ url: 'http://127.0.0.1:9/hooks' })
  expect((await h.send({ channel: 'email', recipient: 'someone@example.com' })).status).toBe(200)
  await h.server.storage.settled()
  const [event] = await h.server.webhooks.events({})
  const r = await h.admin(`/console/api/events/${event!.id}/replay`, { method: 'POST' })
  expect(r.json).toEqual({ id: event!.id, type: event!.type, deliveries: 1, request_id: expect.any(String) })
  expect((await h.admin('/console/api/events/nothing/replay', { method: 'POST' })).status).toBe(404)
  expect((await auditOf(h)).map((e) => [e.action, e.subject])).toEqual([['event.replayed', `event ${event!.id}`]])
})

test('the audit log reads by action, operator and period, and pages by id', async () => {
  const h = await harness()
  for (let i = 1; i <= 3; i++) {
    await h.admin('/console/api/accounts/default/credits/add', { body: { amount: i } })
    h.clock.advance(60_000)
  }
  await h.server.admin.as({ operator: 'carol', source: 'cli' }).createKey({ name: 'k' })
  expect((await auditOf(h, '?action=credits.added')).map((e) => e.details.amount)).toEqual([3, 2, 1])
  expect((await auditOf(h, '?operator=carol')).map((e) => [e.action, e.source])).toEqual([['key.created', 'cli']])
  const since = new Date(h.clock.now() - 150_000).toISOString()
  expect((await auditOf(h, `?since=${since}&action=credits.added`)).map((e) => e.details.amount)).toEqual([3, 2])
  const page = await h.admin('/console/api/audit?limit=2')
  expect(page.json.entries.length).toBe(2)
  const rest = await auditOf(h, `?before_id=${page.json.next_before_id}`)
  expect(rest.map((e) => e.details.amount)).toEqual([2, 1])
  for (const q of ['?action=nothing', '?limit=0', '?since=yesterday']) expect((await h.admin(`/console/api/audit${q}`)).status).toBe(400)
})

/** Every state-changing endpoint with a body that would change something. */
const CHANGES: [string, string, Record<string, unknown> | undefined][] = [
  ['POST', '/console/api/keys', { name: 'x' }],
  ['POST', '/console/api/keys/1/disable', undefined],
  ['POST', '/console/api/keys/1/enable', undefined],
  ['POST', '/console/api/keys/1/revoke', undefined],
  ['PATCH', '/console/api/accounts/default', { test_recipients: false }],
  ['POST', '/console/api/accounts/default/credits/add', { amount: 5 }],
  ['POST', '/console/api/accounts/default/credits/deduct', { amount: 1 }],
  ['POST', '/console/api/fraud/unblock', { scope: 'UZ' }],
  ['POST', '/console/api/events/x/replay', undefined],
]

test('every state-changing endpoint: 403 without the CSRF token and 401 without a session, and nothing changes', async () => {
  const h = await harness(5)
  const state = async () =>
    JSON.stringify([await h.admin('/console/api/keys'), await h.admin('/console/api/accounts')].map((r) => r.json.keys ?? r.json.accounts))
  const before = await state()
  for (const [method, path, body] of CHANGES) {
    const noCsrf = await h.admin(path, { method, body, csrf: null })
    expect({ path, status: noCsrf.status }).toEqual({ path, status: 403 })
    const noSession = await h.admin(path, { method, body, session: null })
    expect({ path, status: noSession.status }).toEqual({ path, status: 401 })
  }
  expect(await state()).toBe(before)
  expect(await auditOf(h)).toEqual([])
  for (const path of ['/console/api/keys', '/console/api/accounts', '/console/api/accounts/default/ledger', '/console/api/audit']) {
    expect({ path, status: (await h.admin(path, { session: null })).status }).toEqual({ path, status: 401 })
  }
})
