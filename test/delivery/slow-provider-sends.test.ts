/**
 * Slow providers through the API (docs/delivery.md#slow-providers), on both
 * engines: a provider's `timeout_ms` moves the send on to the next provider;
 * the delivery record, the credit and the status stay exact, and a failed
 * delivery names the provider that timed out (it may still deliver). The
 * circuit shows in /metrics, and test recipients never touch it.
 */
import { expect, test } from 'bun:test'
import { resolveConfig } from '../../src/config/load.ts'
import { closeAfterTest } from '../kit/cleanup.ts'
import { harnessPerTest, TEST, type Harness } from '../kit/harness.ts'
import { consoleOf } from '../kit/console.ts'
import { hang, startVendorStub } from '../kit/vendor-stub.ts'

const SECRET = 'webhook-secret-must-not-leak'
const start = harnessPerTest()

type Behaviour = 'ok' | 'hang' | '503'

/** Webhook providers in this order, each on its own stub; `settings` adds keys to each table. */
async function setup(behaviours: Behaviour[], settings: Record<string, unknown>[] = [], delivery: Record<string, unknown> = {}) {
  const providers: Record<string, unknown> = {}
  const stubs = behaviours.map((b, i) => {
    const stub = startVendorStub(() =>
      b === 'hang' ? hang({} as never) : b === '503' ? new Response('down', { status: 503 }) : new Response(null, { status: 204 }),
    )
    closeAfterTest(stub)
    providers[`p${i + 1}`] = { type: 'webhook', url: stub.url, secret_env: 'HOOK_SECRET', ...settings[i] }
    return stub
  })
  const h = await start({
    credits: 5,
    configuredDelivery: true,
    env: { HOOK_SECRET: SECRET },
    config: { delivery: { timeout_ms: 5000, ...delivery }, channels: { sms: behaviours.map((_, i) => `p${i + 1}`) }, providers },
  })
  return { h, stubs }
}

const status = async (h: Harness, id: string) => (await h.call(`/api/v1/verifications/${id}`, undefined, { method: 'GET' })).json

async function metric(h: Harness, line: string): Promise<string | undefined> {
  const text = await h.server.metrics.render()
  return text.split('\n').find((l) => l.startsWith(line))
}

test('a provider past its timeout_ms: the next one takes the send, one credit is charged, the status names the one that took it', async () => {
  const { h, stubs } = await setup(['hang', 'ok'], [{ timeout_ms: 300 }])
  const started = performance.now()
  const r = await h.send({ channel: 'sms', recipient: '+14155550123' })
  expect(r.status).toBe(200)
  expect(performance.now() - started).toBeLessThan(2000)
  expect(stubs.map((s) => s.requests.length)).toEqual([1, 1])
  expect((await h.server.admin.balance()).balance).toBe(4)
  const s = await status(h, r.json.verification_id)
  expect([s.status, s.delivery.status, s.delivery.provider]).toEqual(['pending', 'accepted', 'p2'])
  const warned = h.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'provider failed: p1')
  expect([warned.reason, warned.may_still_deliver]).toEqual(['timed out after 300 ms', true])
})

test('every provider failed, one of them by its timeout: 500, refunded, verify 404; the failed delivery names the one that may still deliver', async () => {
  const { h } = await setup(['hang', '503'], [{ timeout_ms: 300 }])
  const r = await h.send({ channel: 'sms', recipient: '+14155550123' })
  expect([r.status, r.json.error]).toEqual([500, 'Failed to send verification'])
  expect((await h.server.admin.balance()).balance).toBe(5)
  const [row] = await h.sql('SELECT id, status, delivery, delivery_provider FROM verifications')
  expect([row!.status, row!.delivery, row!.delivery_provider]).toEqual(['failed', 'failed', 'p1'])
  const v = await h.verify({ verification_id: row!.id, code: '123456' })
  expect([v.status, v.json.error]).toEqual([404, 'Verification not found'])
  const s = await status(h, row!.id)
  expect([s.status, s.delivery.status, s.delivery.provider]).toEqual(['failed', 'failed', 'p1'])
})

test('a failure without a timeout names no provider, as before', async () => {
  const { h } = await setup(['503'])
  expect((await h.send({ channel: 'sms', recipient: '+14155550123' })).status).toBe(500)
  const [row] = await h.sql('SELECT delivery, delivery_provider FROM verifications')
  expect([row!.delivery, row!.delivery_provider]).toEqual(['failed', null])
})

test('the circuit opens after consecutive failures, is in /metrics, and the open provider is skipped; test recipients never touch it', async () => {
  const { h, stubs } = await setup(['503', 'ok'], [], { circuit_failures: 2, circuit_cooldown_ms: 60_000 })
  expect(await metric(h, 'otpd_provider_circuit_state{provider="p1",state="closed"}')).toEndWith(' 1')
  for (let i = 0; i < 2; i++) expect((await h.send({ channel: 'sms', recipient: `+1415555000${i}` })).status).toBe(200)
  expect(await metric(h, 'otpd_provider_circuit_state{provider="p1",state="open"}')).toEndWith(' 1')
  expect(await metric(h, 'otpd_provider_circuit_state{provider="p1",state="closed"}')).toEndWith(' 0')
  expect(await metric(h, 'otpd_provider_in_flight{provider="p2"}')).toBe('otpd_provider_in_flight{provider="p2"} 0')
  expect((await h.send({ channel: 'sms', recipient: '+14155550009' })).status).toBe(200)
  expect(stubs.map((s) => s.requests.length)).toEqual([2, 3])
  expect(await metric(h, 'otpd_provider_attempts_total{channel="sms",provider="p1",outcome="circuit_open"}')).toEndWith(' 1')
  const t = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  expect(t.status).toBe(200)
  expect(stubs.map((s) => s.requests.length)).toEqual([2, 3])
  expect(await metric(h, 'otpd_provider_attempts_total{channel="sms",provider="p1",outcome="circuit_open"}')).toEndWith(' 1')
  // After the cool-down (the injected clock), one probe: p1 still fails, so it opens again.
  h.clock.advance(60_000)
  expect(await metric(h, 'otpd_provider_circuit_state{provider="p1",state="half_open"}')).toEndWith(' 1')
  expect((await h.send({ channel: 'sms', recipient: '+14155550010' })).status).toBe(200)
  expect(stubs.map((s) => s.requests.length)).toEqual([3, 4])
  expect(await metric(h, 'otpd_provider_circuit_state{provider="p1",state="open"}')).toEndWith(' 1')
  const lines = h.logs.map((l) => JSON.parse(l)).filter((l) => l.circuit !== undefined)
  expect(lines.map((l) => [l.level, l.provider, l.from, l.circuit])).toEqual([
    ['info', 'p1', 'closed', 'open'],
    ['info', 'p1', 'open', 'half_open'],
    ['info', 'p1', 'half_open', 'open'],
  ])
})

test("an open circuit is in the admin listener's /readyz detail and on the console's System page; the node stays ready", async () => {
  const { h } = await setup(['503', 'ok'], [], { circuit_failures: 1 })
  expect((await h.send({ channel: 'sms', recipient: '+14155550123' })).status).toBe(200)
  const admin = await h.server.adminHttp.handle(new Request('http://localhost/readyz'))
  expect([admin.status, ((await admin.json()) as { providers: unknown }).providers]).toEqual([200, { log: 'closed', p1: 'open', p2: 'closed' }])
  // The main listener's body is public: it names checks only.
  const main = await h.call('/readyz', undefined, { method: 'GET', key: null })
  expect([main.status, main.json.providers]).toEqual([200, undefined])
  const system = await consoleOf(h).get('/console/api/system', { rollup: false })
  // `log`: the built-in provider of the channels with no list (email and voice here).
  expect(system.json.circuits).toEqual([
    { provider: 'log', circuit: 'closed', in_flight: 0, waiting: 0, max_in_flight: 10_000 },
    { provider: 'p1', circuit: 'open', in_flight: 0, waiting: 0, max_in_flight: 10_000 },
    { provider: 'p2', circuit: 'closed', in_flight: 0, waiting: 0, max_in_flight: 10_000 },
  ])
})

test('a reload gives a provider its new timeout_ms from the next send on', async () => {
  const { h } = await setup(['hang', 'ok'], [{ timeout_ms: 4000 }])
  const config = h.server.config
  const p1 = config.providers.p1 as Record<string, unknown>
  h.server.reload(resolveConfig({ ...config, providers: { ...config.providers, p1: { ...p1, timeout_ms: 200 } } }))
  const started = performance.now()
  const r = await h.send({ channel: 'sms', recipient: '+14155550123' })
  expect(r.status).toBe(200)
  expect(performance.now() - started).toBeLessThan(2000)
  expect(h.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'provider failed: p1').reason).toBe('timed out after 200 ms')
})
