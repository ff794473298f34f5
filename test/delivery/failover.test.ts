/**
 * Failover through the API with real HTTP providers pointed at local stubs:
 * 5xx, timeout and refused connection move on to the next provider in order;
 * when all fail the send is 500, the credit comes back and the verification
 * answers 404; the log says which provider failed and why, with no secret,
 * code or full recipient.
 */
import { expect, test } from 'bun:test'
import { harnessPerTest, type Harness } from '../kit/harness.ts'
import { hang, refusedPort, startVendorStub } from '../kit/vendor-stub.ts'
import { closeAfterTest } from '../kit/cleanup.ts'

const SID = 'AC' + 'f'.repeat(32)
const TOKEN = 'twilio-token-must-not-leak'
const HOOK_SECRET = 'webhook-secret-must-not-leak'
const RECIPIENT = '+14155550123'
const start = harnessPerTest()

type Behaviour = 'ok' | '503' | 'hang' | 'refused' | 'reject'

/** One Twilio-type provider per behaviour, each on its own stub, in the given order. */
async function setup(behaviours: Behaviour[], timeoutMs = 3000) {
  const order: string[] = []
  const providers: Record<string, unknown> = {}
  const names: string[] = behaviours.map((b, i) => {
    const name = `p${i + 1}_${b}`
    let url: string
    if (b === 'refused') url = `http://127.0.0.1:${refusedPort()}`
    else {
      const stub = startVendorStub((r) => {
        order.push(name)
        if (b === 'hang') return hang(r)
        if (b === '503') return Response.json({ code: 20500, message: 'Service unavailable', status: 503 }, { status: 503 })
        if (b === 'reject') return Response.json({ code: 21211, message: `The 'To' number ${RECIPIENT} is not valid`, status: 400 }, { status: 400 })
        return Response.json({ sid: 'SM1', status: 'queued' }, { status: 201 })
      })
      closeAfterTest(stub)
      url = stub.url
    }
    providers[name] = { type: 'twilio', account_sid: SID, auth_token_env: 'TWILIO_AUTH_TOKEN', from: '+15005550006', base_url: url }
    return name
  })
  const h = await start({
    credits: 3,
    configuredDelivery: true,
    env: { TWILIO_AUTH_TOKEN: TOKEN, HOOK_SECRET },
    config: { delivery: { timeout_ms: timeoutMs }, channels: { sms: names }, providers },
  })
  return { h, names, order }
}

async function onlyVerificationId(h: Harness): Promise<string> {
  const rows = (await h.sql('SELECT id FROM verifications')) as { id: string }[]
  expect(rows).toHaveLength(1)
  return rows[0]!.id
}

function expectCleanLogs(h: Harness) {
  const logs = h.logs.join('\n')
  expect(logs).not.toContain(TOKEN)
  expect(logs).not.toContain(RECIPIENT)
  expect(logs).not.toMatch(/code is: \d/)
}

test('a 5xx moves on to the next provider, in the configured order', async () => {
  const { h, names, order } = await setup(['503', '503', 'ok'])
  const r = await h.send({ channel: 'sms', recipient: RECIPIENT })
  expect(r.status).toBe(200)
  expect(order).toEqual(names)
  expect((await h.server.admin.balance()).balance).toBe(2)
  const warnings = h.logs.filter((l) => l.includes('provider failed'))
  expect(warnings.map((l) => JSON.parse(l).provider)).toEqual([names[0], names[1]])
  expect(warnings[0]).toContain('twilio Messages answered 503 (error 20500)')
  expectCleanLogs(h)
})

test('a refused connection moves on to the next provider', async () => {
  const { h, names, order } = await setup(['refused', 'ok'])
  const r = await h.send({ channel: 'sms', recipient: RECIPIENT })
  expect(r.status).toBe(200)
  expect(order).toEqual([names[1]!])
  expect(h.logs.find((l) => l.includes('provider failed'))).toContain('cannot reach http://127.0.0.1:')
})

test('a provider that does not answer times out and the next one is tried', async () => {
  const { h, names, order } = await setup(['hang', 'ok'], 1000)
  const started = performance.now()
  const r = await h.send({ channel: 'sms', recipient: RECIPIENT })
  expect(r.status).toBe(200)
  expect(performance.now() - started).toBeLessThan(2500)
  expect(order).toEqual(names)
  expect(h.logs.find((l) => l.includes('provider failed'))).toMatch(/timed out after \d+ ms/)
})

test('when every provider fails: 500, balance unchanged, verify answers 404, the log names each failure', async () => {
  const { h, names, order } = await setup(['503', 'refused', 'hang'], 1200)
  const r = await h.send({ channel: 'sms', recipient: RECIPIENT })
  expect(r.status).toBe(500)
  expect(r.json).toEqual({ error: 'Failed to send verification', request_id: r.headers.get('x-request-id') })
  expect(order).toEqual([names[0]!, names[2]!])
  expect((await h.server.admin.balance()).balance).toBe(3)
  const v = await h.verify({ verification_id: await onlyVerificationId(h), code: '123456' })
  expect([v.status, v.json.error]).toEqual([404, 'Verification not found'])
  const failed = h.logs.filter((l) => l.includes('provider failed')).map((l) => JSON.parse(l))
  expect(failed.map((f) => f.provider)).toEqual(names)
  expect(failed[0].reason).toBe('twilio Messages answered 503 (error 20500)')
  expect(failed[1].reason).toMatch(/^cannot reach http:\/\/127\.0\.0\.1:\d+/)
  expect(failed[2].reason).toMatch(/^timed out after \d+ ms$/)
  const summary = h.logs.find((l) => l.includes('delivery failed; credit refunded'))!
  expect(summary).toContain(names[0]!)
  expect(summary).toContain('+1415****123')
  expectCleanLogs(h)
})

test('a rejected recipient is not retried on the next provider; the credit comes back', async () => {
  const { h, names, order } = await setup(['reject', 'ok'])
  const r = await h.send({ channel: 'sms', recipient: RECIPIENT })
  expect(r.status).toBe(500)
  expect(order).toEqual([names[0]!])
  expect((await h.server.admin.balance()).balance).toBe(3)
  expectCleanLogs(h)
})

test('a webhook provider fails over to the next one too (mixed provider types)', async () => {
  const hook = startVendorStub(() => new Response('down', { status: 502 }))
  const ok = startVendorStub(() => new Response(null, { status: 204 }))
  closeAfterTest(hook)
  closeAfterTest(ok)
  const h = await start({
    credits: 1,
    configuredDelivery: true,
    env: { HOOK_SECRET },
    config: {
      channels: { voice: ['hook', 'backup'] },
      providers: { hook: { type: 'webhook', url: hook.url, secret_env: 'HOOK_SECRET' }, backup: { type: 'webhook', url: ok.url, secret_env: 'HOOK_SECRET' } },
    },
  })
  const r = await h.send({ channel: 'voice', recipient: RECIPIENT })
  expect(r.status).toBe(200)
  expect(hook.requests).toHaveLength(1)
  expect(ok.requests).toHaveLength(1)
  expect(JSON.parse(ok.requests[0]!.body).message).toMatch(/^Your verification code is: \d, \d, \d, \d, \d, \d$/)
  expect(h.logs.join('\n')).not.toContain(HOOK_SECRET)
})
