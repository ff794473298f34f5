/**
 * The per-key request limit (docs/api.md#limits): 120
 * admitted requests in any rolling 60 s, across both endpoints, per key,
 * stored in the database.
 */
import { describe, expect, test } from 'bun:test'
import { harnessPerTest, TEST, type Harness, type Result } from '../kit/harness.ts'

let h: Harness
const harness = harnessPerTest()
const start = async (config?: Record<string, any>) => (h = await harness({ config }))

const limited = (seconds: number, max = 120) => `Rate limit exceeded: Maximum ${max} requests per minute. Please try again in ${seconds} seconds.`

function expectLimited(r: Result, seconds: number, max = 120) {
  expect(r.status).toBe(429)
  expect(r.json).toEqual({ error: limited(seconds, max), request_id: r.headers.get('x-request-id'), retry_after: seconds })
  expect(r.headers.get('retry-after')).toBe(String(seconds))
}

/** A cheap admitted request: a verify that fails validation (400). */
const ping = (key?: string) => h.verify({}, key)

async function spend(n: number, key?: string) {
  for (let i = 0; i < n; i++) expect((await ping(key)).status).toBe(400)
}

describe('default limit of 120 per minute', () => {
  test('120 requests of every kind pass; the 121st is refused with retry_after', async () => {
    await start()
    const sent = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
    expect(sent.status).toBe(200)
    let n = 1
    for (let i = 0; i < 29; i++, n++) expect((await h.send({ channel: 'email', recipient: TEST.EMAIL_FAIL })).status).toBe(200)
    for (let i = 0; i < 30; i++, n++) expect((await h.verify({ verification_id: sent.json.verification_id, code: '1234' })).json.verified).toBe(false)
    for (let i = 0; i < 30; i++, n++) expect((await h.send({ channel: 'fax' })).status).toBe(400)
    for (let i = 0; i < 30; i++, n++) expect((await h.call('/api/v1/verify', undefined, { raw: '{' })).status).toBe(400)
    expect(n).toBe(120)
    expectLimited(await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS }), 60)
    expectLimited(await h.verify({ verification_id: sent.json.verification_id, code: '123456' }), 60)
  })

  test('the count is the same whichever endpoint is used', async () => {
    await start()
    for (let i = 0; i < 60; i++) expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_FAIL })).status).toBe(200)
    await spend(60)
    expectLimited(await h.send({ channel: 'sms', recipient: TEST.PHONE_FAIL }), 60)
  })
})

describe('rolling 60 s window', () => {
  test('room returns exactly when the oldest requests leave the window', async () => {
    await start()
    const t0 = h.clock.now()
    await spend(60)
    h.clock.set(t0 + 30_000)
    await spend(60)
    expectLimited(await ping(), 30)
    h.clock.set(t0 + 59_000)
    expectLimited(await ping(), 1)
    h.clock.set(t0 + 59_999)
    expectLimited(await ping(), 1)
    h.clock.set(t0 + 60_000)
    // The 60 from t0 have left; the 60 from t0 + 30 s are still in.
    await spend(60)
    expectLimited(await ping(), 30)
  })

  test('retry_after is rounded up to whole seconds', async () => {
    await start()
    const t0 = h.clock.now()
    await spend(120)
    h.clock.set(t0 + 1)
    expectLimited(await ping(), 60)
    h.clock.set(t0 + 1_000)
    expectLimited(await ping(), 59)
    h.clock.set(t0 + 1_001)
    expectLimited(await ping(), 59)
    h.clock.set(t0 + 58_999)
    expectLimited(await ping(), 2)
  })

  test('refused requests are not counted', async () => {
    await start()
    const t0 = h.clock.now()
    await spend(120)
    for (let s = 1; s < 60; s++) {
      h.clock.set(t0 + s * 1000)
      expectLimited(await ping(), 60 - s)
    }
    h.clock.set(t0 + 60_000)
    // Had the 59 refusals counted, the window would still be nearly full.
    await spend(120)
    expectLimited(await ping(), 60)
  })
})

describe('scope and persistence', () => {
  test('each key has its own count', async () => {
    await start()
    const other = (await h.server.admin.createKey({ name: 'other' })).key
    await h.server.admin.createAccount('acme')
    const foreign = (await h.server.admin.createKey({ name: 'acme', account: 'acme' })).key
    await spend(120)
    expectLimited(await ping(), 60)
    await spend(120, other)
    expectLimited(await ping(other), 60)
    await spend(120, foreign)
    expectLimited(await ping(foreign), 60)
  })

  test('requests without a valid key are not counted against any key', async () => {
    await start()
    for (let i = 0; i < 10; i++) expect((await h.verify({}, 'otpd_unknown')).status).toBe(401)
    await spend(120)
    expectLimited(await ping(), 60)
  })

  test('limits.key_requests_per_minute is honoured', async () => {
    await start({ limits: { key_requests_per_minute: 5 } })
    await spend(5)
    expectLimited(await ping(), 60, 5)
  })

  test('the count survives a restart', async () => {
    await start()
    const t0 = h.clock.now()
    await spend(100)
    h.clock.set(t0 + 20_000)
    await spend(20)
    const after = await h.restart()
    h = after
    // After the restart, pass the original key explicitly.
    expectLimited(await ping(after.key), 40)
    h.clock.set(t0 + 60_000)
    await spend(100, after.key)
    expectLimited(await ping(after.key), 20)
  })
})
