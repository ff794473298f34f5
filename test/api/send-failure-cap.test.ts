/**
 * Send to a recipient while its failure cap holds (docs/api.md#hardening):
 * 429 with the exact message, `retry_after` and `Retry-After` = seconds until
 * the failure window has room; nothing charged, delivered or counted, no
 * event; the answer is stored for an Idempotency-Key; test recipients are
 * exempt; and its place among the send's checks (docs/api.md#order-of-checks).
 */
import { describe, expect, test } from 'bun:test'
import { check } from '../kit/json-schema.ts'
import { DAY, harnessPerTest, MINUTE, TEST, type Harness, type HarnessOptions, type Result } from '../kit/harness.ts'

const harness = harnessPerTest()

const PHONE = '+14155550123'
const CODE = '424242'
const WRONG = '000000'
const CAP = 3
const capMessage = (s: number) => `Rate limit exceeded: too many failed attempts for this recipient. Please try again in ${s} seconds.`

/** A harness whose recipients are capped after 3 wrong codes (and never locked by their own 5). */
function start(opts: HarnessOptions = {}): Promise<Harness> {
  return harness({
    credits: 10,
    ...opts,
    config: { ...(opts.config ?? {}), limits: { recipient_failures_per_day: CAP, max_failed_attempts: 100, ...(opts.config?.limits ?? {}) } },
  })
}

/** One code sent to `recipient`, then `CAP` wrong codes a minute apart: the first failure's time. */
async function capRecipient(h: Harness, recipient = PHONE, channel = 'sms'): Promise<number> {
  const sent = await h.send({ channel, recipient, code: CODE })
  expect(sent.status).toBe(200)
  const first = h.clock.now()
  for (let i = 0; i < CAP; i++) {
    expect((await h.verify({ verification_id: sent.json.verification_id, code: WRONG })).json.message).toBe('Invalid code')
    h.clock.advance(MINUTE)
  }
  return first
}

const balance = async (h: Harness) => (await h.server.admin.balance()).balance
const eventCount = async (h: Harness) => Number((await h.sql('SELECT count(*) AS n FROM events'))[0]!.n)
const verificationCount = async (h: Harness) => Number((await h.sql('SELECT count(*) AS n FROM verifications'))[0]!.n)

function expectCapped(r: Result, seconds: number) {
  expect(r.status).toBe(429)
  expect(r.json).toEqual({ error: capMessage(seconds), request_id: r.headers.get('x-request-id')!, retry_after: seconds })
  expect(r.headers.get('retry-after')).toBe(String(seconds))
}

/** The value of one metric series in the exposition text (0 when absent). */
async function metric(h: Harness, series: string): Promise<number> {
  const line = (await h.server.metrics.render()).split('\n').find((l) => l.startsWith(`${series} `))
  return line ? Number(line.split(' ').at(-1)) : 0
}

describe('a send to a capped recipient', () => {
  test('answers 429 with the exact message and the wait until the failure window has room; charges, delivers and records nothing', async () => {
    const h = await start()
    const first = await capRecipient(h)
    const [credits, delivered, events, verifications] = [await balance(h), h.delivery.sent.length, await eventCount(h), await verificationCount(h)]
    h.clock.advance(30 * MINUTE)
    // The window has room once the oldest of the 3 failures is 24 h old.
    expectCapped(await h.send({ channel: 'sms', recipient: PHONE }), Math.ceil((first + DAY - h.clock.now()) / 1000))
    // Across channels: the number on voice is the same recipient.
    expectCapped(await h.send({ channel: 'voice', recipient: PHONE }), Math.ceil((first + DAY - h.clock.now()) / 1000))
    expect(await balance(h)).toBe(credits)
    expect(h.delivery.sent).toHaveLength(delivered)
    // No verification and no event: `send.blocked` is the fraud guard's alone.
    expect(await verificationCount(h)).toBe(verifications)
    expect(await eventCount(h)).toBe(events)
    // Counted where verify's cap lockout is counted, and as a rate-limited send.
    expect(await metric(h, 'otpd_rate_limited_total{kind="recipient_failures"}')).toBe(2)
    expect(await metric(h, 'otpd_sends_total{channel="sms",provider="none",outcome="rate_limited"}')).toBe(1)
    expect(await metric(h, 'otpd_sends_total{channel="voice",provider="none",outcome="rate_limited"}')).toBe(1)
    // Other recipients are not held.
    expect((await h.send({ channel: 'sms', recipient: '+14155550124' })).status).toBe(200)
  })

  test('counts toward no limit: once the window has room, the recipient has its whole per-minute budget and the IP its hour', async () => {
    const h = await start({ config: { limits: { recipient_per_minute: 2 }, fraud: { mode: 'enforce', ip_per_hour: 2 } } })
    const first = await capRecipient(h)
    // Refused a second before the window has room, in the minute that follows, from one IP.
    h.clock.set(first + DAY - 1000)
    for (let i = 0; i < 3; i++) expectCapped(await h.send({ channel: 'sms', recipient: PHONE, ip: '198.51.100.7' }), 1)
    h.clock.set(first + DAY)
    expect((await h.send({ channel: 'sms', recipient: PHONE, ip: '198.51.100.7' })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: PHONE, ip: '198.51.100.7' })).status).toBe(200)
    const third = await h.send({ channel: 'sms', recipient: PHONE })
    expect(third.status).toBe(429)
    expect(third.json.error).toBe(`Rate limit exceeded: Maximum 2 verification codes per minute. Please try again in 60 seconds.`)
    const ip = await h.send({ channel: 'sms', recipient: '+14155550124', ip: '198.51.100.7' })
    expect(ip.json.error).toBe('Rate limit exceeded: Maximum 2 verification codes per hour for this IP address. Please try again in 3600 seconds.')
  })

  test('with an Idempotency-Key the 429 is stored and replayed verbatim, also after the window has room', async () => {
    const h = await start()
    const first = await capRecipient(h)
    const headers = { 'idempotency-key': 'capped-send-1' }
    const body = { channel: 'sms', recipient: PHONE }
    const wait = Math.ceil((first + DAY - h.clock.now()) / 1000)
    const r = await h.call('/api/v1/send', body, { headers })
    expectCapped(r, wait)
    h.clock.set(first + DAY)
    const again = await h.call('/api/v1/send', body, { headers })
    expect(again.status).toBe(429)
    expect(again.json).toEqual(r.json)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.headers.get('x-request-id')).toBe(r.json.request_id)
    expect(again.headers.get('retry-after')).toBe(String(wait))
    expect(h.delivery.sent).toHaveLength(1)
    // A new key runs: the window has room now.
    expect((await h.call('/api/v1/send', body, { headers: { 'idempotency-key': 'capped-send-2' } })).status).toBe(200)
  })

  test('matches the OpenAPI document: a documented 429 of send, with Retry-After', async () => {
    const h = await start()
    await capRecipient(h)
    const r = await h.send({ channel: 'sms', recipient: PHONE })
    const doc = (await (await h.server.http.handle(new Request('http://localhost/api/v1/openapi.json'))).json()) as Record<string, any>
    const schema = doc.paths['/api/v1/send'].post.responses['429'].content['application/json'].schema
    expect(check(schema, r.json, doc)).toEqual([])
    expect(check(schema, { ...r.json, error: 'Rate limit exceeded: too many failed attempts for this recipient.' }, doc)).not.toEqual([])
    expect(Object.keys(doc.paths['/api/v1/send'].post.responses['429'].headers)).toContain('Retry-After')
  })
})

describe('test recipients are exempt', () => {
  test('a test phone with failures on record under its hash (recorded while test recipients were off) is answered as a test recipient', async () => {
    const h = await start()
    await h.server.fraud.setAccount('default', { testRecipients: false })
    const first = await capRecipient(h, TEST.PHONE_FAIL)
    // Off: it is an ordinary recipient, and capped.
    expectCapped(await h.send({ channel: 'sms', recipient: TEST.PHONE_FAIL }), Math.ceil((first + DAY - h.clock.now()) / 1000))
    await h.server.fraud.setAccount('default', { testRecipients: true })
    const credits = await balance(h)
    const r = await h.send({ channel: 'sms', recipient: TEST.PHONE_FAIL })
    expect(r.status).toBe(200)
    expect(await balance(h)).toBe(credits)
    expect((await h.verify({ verification_id: r.json.verification_id, code: '123456' })).json.message).toBe('Invalid code')
  })

  test('the email test recipient stays one while the same address with a +tag, an ordinary address counted as the same recipient, is capped', async () => {
    const h = await start()
    const first = await capRecipient(h, 'success+ci@otpd.test', 'email')
    expectCapped(await h.send({ channel: 'email', recipient: 'Success+other@otpd.test' }), Math.ceil((first + DAY - h.clock.now()) / 1000))
    const r = await h.send({ channel: 'email', recipient: TEST.EMAIL_SUCCESS })
    expect(r.status).toBe(200)
    expect((await h.verify({ verification_id: r.json.verification_id, code: '123456' })).json.verified).toBe(true)
  })
})

describe('its place among the checks of a send', () => {
  test('after the fraud guard: a country not allowed answers 403 for a capped recipient', async () => {
    const h = await start({ config: { fraud: { mode: 'enforce' } } })
    await capRecipient(h)
    await h.server.fraud.setAccount('default', { allowedCountries: ['CA'] })
    const r = await h.send({ channel: 'sms', recipient: PHONE })
    expect(r.status).toBe(403)
    expect(r.json.error).toBe('Sending to this destination country is not allowed: US')
  })

  test('before the send windows: a capped recipient whose minute is also full gets the cap', async () => {
    const h = await start({ config: { limits: { recipient_per_minute: 1 } } })
    const sent = await h.send({ channel: 'sms', recipient: PHONE, code: CODE })
    const first = h.clock.now()
    for (let i = 0; i < CAP; i++) await h.verify({ verification_id: sent.json.verification_id, code: WRONG })
    // Same instant: the minute holds its one send, and the cap is full.
    expectCapped(await h.send({ channel: 'sms', recipient: PHONE }), Math.ceil((first + DAY - h.clock.now()) / 1000))
  })

  test('before credits: with a balance of 0 a capped recipient gets the cap, not 402', async () => {
    const h = await start({ credits: 1 })
    const first = await capRecipient(h)
    expect(await balance(h)).toBe(0)
    expectCapped(await h.send({ channel: 'sms', recipient: PHONE }), Math.ceil((first + DAY - h.clock.now()) / 1000))
    expect((await h.send({ channel: 'sms', recipient: '+14155550124' })).status).toBe(402)
  })

  test('after the per-key limit: the request over it gets the per-key 429', async () => {
    const h = await start({ config: { limits: { key_requests_per_minute: 5 } } })
    // Four requests in one instant: a send and the 3 wrong codes that fill the cap.
    const sent = await h.send({ channel: 'sms', recipient: PHONE, code: CODE })
    for (let i = 0; i < CAP; i++) await h.verify({ verification_id: sent.json.verification_id, code: WRONG })
    expectCapped(await h.send({ channel: 'sms', recipient: PHONE }), DAY / 1000)
    const r = await h.send({ channel: 'sms', recipient: PHONE })
    expect(r.status).toBe(429)
    expect(r.json.error).toBe('Rate limit exceeded: Maximum 5 requests per minute. Please try again in 60 seconds.')
  })
})
