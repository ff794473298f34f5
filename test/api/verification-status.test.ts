/**
 * GET /api/v1/verifications/{verification_id} (docs/api.md#verification-status):
 * the fields, each status in the documented order, `delivery`, and the common rules of
 * new paths (authentication, per-key limit, request id, 404 for another key's
 * verification, 405). Reading is not an attempt and changes nothing.
 */
import { describe, expect, test } from 'bun:test'
import { RECOVERY_MARGIN_MS } from '../../src/otp/recovery.ts'
import type { OutboundMessage } from '../../src/otp/types.ts'
import { expectError, harnessPerTest, RecordingDelivery, sendReal, StuckDelivery, TEST, type Harness } from '../kit/harness.ts'

const start = harnessPerTest()

const PHONE = '+14155550123'
const WRONG = '000000'
const status = (h: Harness, id: string, key?: string | null) => h.call(`/api/v1/verifications/${id}`, undefined, { method: 'GET', key, headers: {} })
const iso = (ms: number) => new Date(ms).toISOString()

/** The verification's stored row, read directly. */
async function row(h: Harness, id: string) {
  return (await h.sql('SELECT * FROM verifications WHERE id = $1', [id]))[0]
}

async function onlyId(h: Harness): Promise<string> {
  return (await h.sql('SELECT id FROM verifications'))[0]!.id
}

describe('the answer', () => {
  test('a real send: every field, the masked recipient, times as expires_at, delivery accepted by its provider', async () => {
    const h = await start({ credits: 1 })
    const t0 = h.clock.now()
    const { id } = await sendReal(h, PHONE, { expires_in: 120 })
    await h.server.storage.settled() // the outcome's record follows the answer
    h.clock.advance(5_000)
    const r = await status(h, id)
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(r.json).toEqual({
      success: true,
      verification_id: id,
      channel: 'sms',
      recipient: '+1415****123',
      status: 'pending',
      created_at: iso(t0),
      expires_at: iso(t0 + 120_000),
      failed_attempts: 0,
      delivery: { status: 'accepted', provider: 'recording', updated_at: iso(t0), encoding: 'GSM-7', segments: 1 },
      request_id: r.headers.get('x-request-id')!,
    })
    expect(r.json.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  })

  test('a test recipient: delivery is null; an email recipient is masked', async () => {
    const h = await start()
    const phone = await h.send({ channel: 'voice', recipient: TEST.PHONE_SUCCESS })
    const r = await status(h, phone.json.verification_id)
    expect(r.json).toMatchObject({ channel: 'voice', recipient: '+1555****001', status: 'pending', delivery: null })
    const email = await h.send({ channel: 'email', recipient: TEST.EMAIL_SUCCESS })
    expect((await status(h, email.json.verification_id)).json).toMatchObject({ channel: 'email', recipient: 's*****s@otpd.test', delivery: null })
  })

  test('delivery `sending` while the provider works, then `accepted`', async () => {
    let seen: OutboundMessage | undefined
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    class Held extends RecordingDelivery {
      override async deliver(m: OutboundMessage) {
        seen = m
        await gate
        return super.deliver(m)
      }
    }
    const h = await start({ credits: 1, delivery: new Held() })
    const pending = h.send({ channel: 'sms', recipient: PHONE })
    while (!seen) await Bun.sleep(5)
    const during = await status(h, seen.verificationId)
    expect(during.json.status).toBe('pending')
    expect(during.json.delivery).toEqual({ status: 'sending', provider: null, updated_at: iso(h.clock.now()), encoding: 'GSM-7', segments: 1 })
    release()
    expect((await pending).status).toBe(200)
    // The answer does not wait for the `accepted` record (docs/operating.md#faults-and-recovery): it lands just after.
    await h.server.storage.settled()
    expect((await status(h, seen.verificationId)).json.delivery).toMatchObject({ status: 'accepted', provider: 'recording' })
  })

  test('delivery `unknown` after recovery: still pending, the code still verifies', async () => {
    // The process "stops" during the delivery.
    const stuck = new StuckDelivery()
    const h = await start({ credits: 1, delivery: stuck })
    void h.send({ channel: 'sms', recipient: PHONE, code: '4321' })
    while (!stuck.seen) await Bun.sleep(5)
    const seen = stuck.seen
    h.clock.advance(10_000 + RECOVERY_MARGIN_MS + 1)
    expect(await h.server.recover()).toBe(1)
    const r = await status(h, seen.verificationId)
    expect(r.json).toMatchObject({ status: 'pending', delivery: { status: 'unknown', provider: null, updated_at: iso(h.clock.now()) } })
    expect((await h.verify({ verification_id: seen.verificationId, code: '4321' })).json.verified).toBe(true)
  })
})

describe('status, in the documented order', () => {
  test('failed: no provider took it (delivery failed), and it stays failed after its expiry', async () => {
    const h = await start({ credits: 1 })
    h.delivery.fail = true
    const sent = await h.send({ channel: 'sms', recipient: PHONE })
    expect(sent.status).toBe(500)
    const id = await onlyId(h)
    expect((await status(h, id)).json).toMatchObject({ status: 'failed', delivery: { status: 'failed', provider: null } })
    h.clock.advance(3_600_000)
    expect((await status(h, id)).json.status).toBe('failed')
  })

  test('approved: used, also once past its expiry', async () => {
    const h = await start({ credits: 1 })
    const { id, code } = await sendReal(h)
    expect((await h.verify({ verification_id: id, code })).json.verified).toBe(true)
    expect((await status(h, id)).json).toMatchObject({ status: 'approved', failed_attempts: 0 })
    h.clock.advance(3_600_000)
    expect((await status(h, id)).json.status).toBe('approved')
  })

  test('expired: exactly when now >= expires_at; a test EXPIRED recipient at once', async () => {
    const h = await start({ credits: 1 })
    const { id } = await sendReal(h, PHONE, { expires_in: 60 })
    h.clock.advance(59_999)
    expect((await status(h, id)).json.status).toBe('pending')
    h.clock.advance(1)
    expect((await status(h, id)).json.status).toBe('expired')
    const t = await h.send({ channel: 'sms', recipient: TEST.PHONE_EXPIRED })
    expect((await status(h, t.json.verification_id)).json.status).toBe('expired')
  })

  test('locked: its own lockout, with failed_attempts; expired wins over locked; at the lock end pending with 0 attempts', async () => {
    const h = await start({ credits: 2 })
    const { id, code } = await sendReal(h, PHONE, { expires_in: 3600 })
    for (let i = 1; i <= 4; i++) {
      await h.verify({ verification_id: id, code: WRONG })
      expect((await status(h, id)).json).toMatchObject({ status: 'pending', failed_attempts: i })
    }
    await h.verify({ verification_id: id, code: WRONG })
    expect((await status(h, id)).json).toMatchObject({ status: 'locked', failed_attempts: 5 })
    h.clock.advance(900_000 - 1)
    expect((await status(h, id)).json.status).toBe('locked')
    h.clock.advance(1)
    // As verify counts them: the lock has ended, the counter is back to 0.
    expect((await status(h, id)).json).toMatchObject({ status: 'pending', failed_attempts: 0 })
    expect((await h.verify({ verification_id: id, code })).json.verified).toBe(true)

    const short = await sendReal(h, '+14155550124', { expires_in: 60 })
    for (let i = 0; i < 5; i++) await h.verify({ verification_id: short.id, code: WRONG })
    expect((await status(h, short.id)).json.status).toBe('locked')
    h.clock.advance(60_000)
    expect((await status(h, short.id)).json.status).toBe('expired')
  })

  test("locked: the recipient's failure cap locks a verification with no failure of its own, until the window has room", async () => {
    const h = await start({ credits: 3, config: { limits: { recipient_failures_per_day: 3, max_failed_attempts: 100 } } })
    const t0 = h.clock.now()
    // Both sent before the cap fills: send sells no code to a capped recipient (docs/api.md#hardening).
    const first = await sendReal(h, PHONE, { expires_in: 3600 })
    h.clock.advance(61_000)
    const second = await sendReal(h, PHONE, { expires_in: 3600 })
    for (let i = 0; i < 3; i++) await h.verify({ verification_id: first.id, code: WRONG })
    expect((await status(h, second.id)).json).toMatchObject({ status: 'locked', failed_attempts: 0 })
    expect((await status(h, first.id)).json).toMatchObject({ status: 'locked', failed_attempts: 3 })
    // Verify agrees: the lockout 429.
    expect((await h.verify({ verification_id: second.id, code: second.code })).status).toBe(429)
    const other = await sendReal(h, '+14155550199')
    expect((await status(h, other.id)).json.status).toBe('pending')
    h.clock.set(t0 + 86_400_000)
    // Expired by now; a fresh one for the recipient is pending again.
    expect((await status(h, second.id)).json.status).toBe('expired')
  })

  test('canceled: before everything, also once past its expiry', async () => {
    const h = await start({ credits: 1 })
    const { id } = await sendReal(h, PHONE, { expires_in: 60 })
    expect((await h.call(`/api/v1/verifications/${id}/cancel`)).status).toBe(200)
    expect((await status(h, id)).json).toMatchObject({ status: 'canceled', delivery: { status: 'accepted' } })
    h.clock.advance(120_000)
    expect((await status(h, id)).json.status).toBe('canceled')
  })
})

describe('reading changes nothing', () => {
  test('reads are not attempts: a locked verification stays locked, counters and the row are unchanged', async () => {
    const h = await start({ credits: 1 })
    const { id, code } = await sendReal(h, PHONE, { expires_in: 3600 })
    await h.verify({ verification_id: id, code: WRONG })
    // The send's outcome is written after its answer: the row is compared once it is in.
    await h.server.storage.settled()
    const before = await row(h, id)
    for (let i = 0; i < 10; i++) expect((await status(h, id)).json.failed_attempts).toBe(1)
    expect(await row(h, id)).toEqual(before)
    // A lock that has ended is shown as verify counts it, without being written.
    for (let i = 0; i < 4; i++) await h.verify({ verification_id: id, code: WRONG })
    h.clock.advance(900_000)
    const locked = await row(h, id)
    expect((await status(h, id)).json.failed_attempts).toBe(0)
    expect(await row(h, id)).toEqual(locked)
    expect((await h.verify({ verification_id: id, code })).json.verified).toBe(true)
  })
})

describe('common rules of new paths', () => {
  test("another key's verification, an unknown id and a malformed one: 404 Verification not found", async () => {
    const h = await start({ credits: 1 })
    const { id } = await sendReal(h)
    const other = (await h.server.admin.createKey({ name: 'other' })).key
    expectError(await status(h, id, other), 404, 'Verification not found')
    expectError(await status(h, '00000000-0000-4000-8000-000000000000'), 404, 'Verification not found')
    expectError(await status(h, 'not-an-id'), 404, 'Verification not found')
    expectError(await status(h, id.toUpperCase()), 404, 'Verification not found')
    // Whatever the path holds: never a 500.
    for (const odd of ['%E0%A4%A', '%ZZ', 'a%2Fb', '%00', 'x'.repeat(5000)]) expectError(await status(h, odd), 404, 'Verification not found')
    // A percent-encoded id is the same id.
    expect((await status(h, id.replace('-', '%2D'))).json.verification_id).toBe(id)
  })

  test('HEAD answers like GET, without a body', async () => {
    const h = await start()
    const t = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
    const res = await h.server.http.handle(
      new Request(`http://localhost/api/v1/verifications/${t.json.verification_id}`, { method: 'HEAD', headers: { authorization: `Bearer ${h.key}` } }),
    )
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('')
  })

  test('authentication: 401 without a key or with a wrong one, 403 for a disabled key (no body, no Content-Type needed)', async () => {
    const h = await start()
    const t = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
    const path = `/api/v1/verifications/${t.json.verification_id}`
    const bare = await h.server.http.handle(new Request(`http://localhost${path}`))
    expect(bare.status).toBe(401)
    expect(((await bare.json()) as Record<string, unknown>).error).toBe('API key is required. Provide it via Authorization: Bearer <token> or x-api-key header')
    expectError(await status(h, t.json.verification_id, 'otpd_' + 'x'.repeat(40)), 401, 'Invalid API key')
    const viaHeader = await h.server.http.handle(new Request(`http://localhost${path}`, { headers: { 'x-api-key': h.key } }))
    expect(viaHeader.status).toBe(200)
    const off = await h.server.admin.createKey({ name: 'off' })
    await h.server.admin.setKeyStatus(String(off.id), 'disabled')
    expectError(await status(h, t.json.verification_id, off.key), 403, 'API key is disabled')
  })

  test('reads count toward the per-key limit with send and verify, 429 with Retry-After', async () => {
    const h = await start({ config: { limits: { key_requests_per_minute: 3 } } })
    const t = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
    expect((await status(h, t.json.verification_id)).status).toBe(200)
    expect((await status(h, t.json.verification_id)).status).toBe(200)
    h.clock.advance(10_000)
    const limited = await status(h, t.json.verification_id)
    expect(limited.status).toBe(429)
    expect(limited.json).toEqual({
      error: 'Rate limit exceeded: Maximum 3 requests per minute. Please try again in 50 seconds.',
      retry_after: 50,
      request_id: limited.headers.get('x-request-id')!,
    })
    expect(limited.headers.get('retry-after')).toBe('50')
    expect((await h.verify({ verification_id: t.json.verification_id, code: '123456' })).status).toBe(429)
  })

  test('wrong methods: 405 Method not allowed, before authentication', async () => {
    const h = await start()
    for (const [method, path] of [
      ['POST', '/api/v1/verifications/abc'],
      ['PUT', '/api/v1/verifications/abc'],
      ['DELETE', '/api/v1/verifications/abc'],
      ['PATCH', '/api/v1/verifications/abc'],
      ['GET', '/api/v1/verifications/abc/cancel'],
      ['PUT', '/api/v1/verifications/abc/cancel'],
      ['DELETE', '/api/v1/verifications/abc/cancel'],
    ] as const) {
      const r = await h.call(path, undefined, { method, key: null })
      expectError(r, 405, 'Method not allowed')
    }
    expectError(await h.call('/api/v1/verifications', undefined, { method: 'GET' }), 404, 'Not found')
    expectError(await h.call('/api/v1/verifications/a/b', undefined, { method: 'GET' }), 404, 'Not found')
  })
})
