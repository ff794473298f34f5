/**
 * POST /api/v1/verifications/{verification_id}/cancel (docs/api.md#cancel):
 * pending and locked verifications become canceled (verify then answers 404,
 * status shows canceled, no refund), a canceled one answers the same 200,
 * approved/expired/failed ones 409; the common rules of new paths; a cancel
 * while the delivery is under way (every event says canceled). The body rules
 * are rows of the route's table (cancel-scenarios.test.ts).
 */
import { describe, expect, test } from 'bun:test'
import type { OutboundMessage } from '../../src/otp/types.ts'
import { deliverEvents } from '../kit/events.ts'
import { expectError, harnessPerTest, RecordingDelivery, sendReal, TEST, type Harness, type Result } from '../kit/harness.ts'
import { receiverPerTest } from '../kit/webhook-receiver.ts'

const start = harnessPerTest()
const receiver = receiverPerTest()

const PHONE = '+14155550123'
const WRONG = '000000'
const cancelPath = (id: string) => `/api/v1/verifications/${id}/cancel`
const cancel = (h: Harness, id: string, key?: string | null) => h.call(cancelPath(id), undefined, { key, headers: {} })
const status = (h: Harness, id: string) => h.call(`/api/v1/verifications/${id}`, undefined, { method: 'GET', headers: {} })

function expectCanceled(r: Result, id: string) {
  expect(r.status).toBe(200)
  expect(r.json).toEqual({ success: true, verification_id: id, status: 'canceled', request_id: r.headers.get('x-request-id')! })
}

describe('what cancel does', () => {
  test('a pending verification becomes canceled: verify answers 404, status shows canceled, the credit is not refunded', async () => {
    const h = await start({ credits: 2 })
    const { id, code } = await sendReal(h)
    expect((await h.server.admin.balance()).balance).toBe(1)
    expectCanceled(await cancel(h, id), id)
    expectError(await h.verify({ verification_id: id, code }), 404, 'Verification not found')
    expect((await status(h, id)).json.status).toBe('canceled')
    expect((await h.server.admin.balance()).balance).toBe(1)
    expect((await h.sql('SELECT kind FROM credit_ledger ORDER BY id')).map((r) => r.kind)).toEqual(['grant', 'debit'])
  })

  test('canceling a canceled verification answers the same 200 (idempotent), also after its expiry', async () => {
    const h = await start({ credits: 1 })
    const { id } = await sendReal(h, PHONE, { expires_in: 60 })
    expectCanceled(await cancel(h, id), id)
    expectCanceled(await cancel(h, id), id)
    h.clock.advance(120_000)
    expectCanceled(await cancel(h, id), id)
  })

  test('a locked verification (its own lockout) becomes canceled', async () => {
    const h = await start({ credits: 1 })
    const { id, code } = await sendReal(h, PHONE, { expires_in: 3600 })
    for (let i = 0; i < 5; i++) await h.verify({ verification_id: id, code: WRONG })
    expect((await status(h, id)).json.status).toBe('locked')
    expectCanceled(await cancel(h, id), id)
    h.clock.advance(900_000)
    expectError(await h.verify({ verification_id: id, code }), 404, 'Verification not found')
  })

  test("a verification locked by the recipient's failure cap becomes canceled", async () => {
    const h = await start({ credits: 2, config: { limits: { recipient_failures_per_day: 2, max_failed_attempts: 100 } } })
    // Sent before the cap fills: send sells no code to a capped recipient (docs/api.md#hardening).
    const first = await sendReal(h)
    h.clock.advance(61_000)
    const second = await sendReal(h)
    await h.verify({ verification_id: first.id, code: WRONG })
    await h.verify({ verification_id: first.id, code: WRONG })
    expect((await status(h, second.id)).json.status).toBe('locked')
    expectCanceled(await cancel(h, second.id), second.id)
    expect((await status(h, second.id)).json.status).toBe('canceled')
  })

  test('approved, expired and failed: 409 Verification is already <status>, nothing changes', async () => {
    const h = await start({ credits: 3 })
    const used = await sendReal(h)
    await h.verify({ verification_id: used.id, code: used.code })
    expectError(await cancel(h, used.id), 409, 'Verification is already approved')
    expect((await status(h, used.id)).json.status).toBe('approved')

    const late = await sendReal(h, '+14155550124', { expires_in: 60 })
    h.clock.advance(60_000)
    expectError(await cancel(h, late.id), 409, 'Verification is already expired')
    const testExpired = await h.send({ channel: 'sms', recipient: TEST.PHONE_EXPIRED })
    expectError(await cancel(h, testExpired.json.verification_id), 409, 'Verification is already expired')

    h.delivery.fail = true
    expect((await h.send({ channel: 'sms', recipient: '+14155550125' })).status).toBe(500)
    const failed = (await h.sql("SELECT id FROM verifications WHERE status = 'failed'"))[0]!.id as string
    expectError(await cancel(h, failed), 409, 'Verification is already failed')
    expect((await status(h, failed)).json.status).toBe('failed')
  })

  test('a test recipient verification can be canceled too', async () => {
    const h = await start()
    const t = await h.send({ channel: 'email', recipient: TEST.EMAIL_SUCCESS })
    expectCanceled(await cancel(h, t.json.verification_id), t.json.verification_id)
    expectError(await h.verify({ verification_id: t.json.verification_id, code: '123456' }), 404, 'Verification not found')
  })

  test('a canceled send still counts toward the per-recipient limits (canceling buys no extra codes)', async () => {
    const h = await start({ credits: 5 })
    const a = await sendReal(h)
    expectCanceled(await cancel(h, a.id), a.id)
    const b = await sendReal(h)
    expectCanceled(await cancel(h, b.id), b.id)
    const third = await h.send({ channel: 'sms', recipient: PHONE })
    expect(third.status).toBe(429)
    expect(third.json.error).toBe('Rate limit exceeded: Maximum 2 verification codes per minute. Please try again in 60 seconds.')
  })
})

describe('common rules of new paths', () => {
  test("another key's verification and an unknown id: 404 Verification not found, nothing changes", async () => {
    const h = await start({ credits: 1 })
    const { id, code } = await sendReal(h)
    const other = (await h.server.admin.createKey({ name: 'other' })).key
    expectError(await cancel(h, id, other), 404, 'Verification not found')
    expectError(await cancel(h, '00000000-0000-4000-8000-000000000000'), 404, 'Verification not found')
    expectError(await cancel(h, 'nope'), 404, 'Verification not found')
    expect((await h.verify({ verification_id: id, code })).json.verified).toBe(true)
  })

  test('whatever the path holds, with or without an Idempotency-Key: 404, never a 500 (PostgreSQL text holds no NUL)', async () => {
    const h = await start()
    for (const odd of ['%00', 'a%00b', '%E0%A4%A', '%ZZ', 'x'.repeat(5000)]) {
      expectError(await cancel(h, odd), 404, 'Verification not found')
      const keyed = await h.call(cancelPath(odd), undefined, { headers: { 'idempotency-key': `odd-${odd.length}` } })
      expectError(keyed, 404, 'Verification not found')
      // The 404 is stored for the key: the same request again is its replay.
      const again = await h.call(cancelPath(odd), undefined, { headers: { 'idempotency-key': `odd-${odd.length}` } })
      expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([404, 'true'])
    }
  })

  test('authentication: 401 and 403 before anything', async () => {
    const h = await start()
    const t = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
    const id = t.json.verification_id as string
    expectError(await cancel(h, id, null), 401, 'API key is required. Provide it via Authorization: Bearer <token> or x-api-key header')
    expectError(await cancel(h, id, 'otpd_' + 'y'.repeat(40)), 401, 'Invalid API key')
    const off = await h.server.admin.createKey({ name: 'off' })
    await h.server.admin.setKeyStatus(String(off.id), 'disabled')
    expectError(await cancel(h, id, off.key), 403, 'API key is disabled')
    expect((await status(h, id)).json.status).toBe('pending')
  })

  test('cancels count toward the per-key limit; a limited cancel changes nothing', async () => {
    const h = await start({ config: { limits: { key_requests_per_minute: 2 } } })
    const t = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
    const id = t.json.verification_id as string
    // The 400 of a bad body counts too.
    expectError(await h.call(cancelPath(id), undefined, { raw: '[', headers: {} }), 400, 'Request body must be valid JSON')
    const limited = await cancel(h, id)
    expect(limited.status).toBe(429)
    expect(limited.json.error).toBe('Rate limit exceeded: Maximum 2 requests per minute. Please try again in 60 seconds.')
    expect(limited.headers.get('retry-after')).toBe('60')
    h.clock.advance(60_000)
    expect((await status(h, id)).json.status).toBe('pending')
  })
})

describe('a cancel while the delivery is under way', () => {
  function held(fail: boolean) {
    let seen: OutboundMessage | undefined
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    class Held extends RecordingDelivery {
      override async deliver(m: OutboundMessage): Promise<{ provider: string }> {
        seen = m
        await gate
        if (fail) throw new Error('provider unavailable (test)')
        return { provider: 'recording' }
      }
    }
    return { delivery: new Held(), seen: () => seen, release: () => release() }
  }

  for (const fail of [false, true]) {
    test(`then the provider ${fail ? 'fails (refunded: nothing was delivered)' : 'takes it (not refunded)'}: the status stays canceled, and every event says canceled`, async () => {
      const d = held(fail)
      const h = await start({ delivery: d.delivery, credits: 1 })
      const rx = receiver()
      await h.server.webhooks.add({ url: rx.url })
      const sending = h.send({ channel: 'sms', recipient: '+14155550123' })
      while (!d.seen()) await Bun.sleep(5)
      const id = d.seen()!.verificationId
      const c = await h.call(`/api/v1/verifications/${id}/cancel`, undefined, { headers: {} })
      expect(c.json).toMatchObject({ success: true, status: 'canceled' })
      d.release()
      expect((await sending).status).toBe(fail ? 500 : 200)
      await h.server.storage.settled()
      const s = await h.call(`/api/v1/verifications/${id}`, undefined, { method: 'GET' })
      expect(s.json).toMatchObject({ status: 'canceled', delivery: { status: fail ? 'failed' : 'accepted' } })
      expect((await h.server.admin.balance()).balance).toBe(fail ? 1 : 0)
      await deliverEvents(h)
      const events = rx.received.filter((r) => r.json.data.verification_id === id).map((r) => [r.json.type, r.json.data.status])
      expect(events).toEqual([
        ['verification.canceled', 'canceled'],
        [fail ? 'verification.delivery_failed' : 'verification.sent', 'canceled'],
      ])
    })
  }
})
