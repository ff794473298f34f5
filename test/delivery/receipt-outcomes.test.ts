/**
 * What a delivery receipt does to a verification, whatever became of it
 * (docs/api.md#delivery-receipts): the status after a receipt, a receipt for
 * a delivery whose outcome otpd never learnt (`unknown`) or that no provider
 * took (`failed`), and a receipt that comes before the provider's own failed
 * answer, with and without an Idempotency-Key. Receipts come through the
 * harness's recording delivery (test/kit/receipts.ts); the provider-specific
 * receipts, against vendor stubs, are in receipts.test.ts.
 */
import { describe, expect, test } from 'bun:test'
import { RECOVERY_MARGIN_MS } from '../../src/otp/recovery.ts'
import type { OutboundMessage } from '../../src/otp/types.ts'
import { eventTypes } from '../kit/events.ts'
import { expectError, harnessPerTest, RecordingDelivery, StuckDelivery, type Harness } from '../kit/harness.ts'
import { postReceipt, RECORDING_RECEIPTS } from '../kit/receipts.ts'

const start = harnessPerTest(RECORDING_RECEIPTS)

const PHONE = '+14155550123'
const SEND = '/api/v1/send'
const cancelPath = (id: string) => `/api/v1/verifications/${id}/cancel`
const statusOf = (h: Harness, id: string) => h.call(`/api/v1/verifications/${id}`, undefined, { method: 'GET', headers: {} })
const withKey = (key: string) => ({ headers: { 'idempotency-key': key } })

describe('the status after a receipt', () => {
  test('undelivered changes the delivery only: the status stays pending, the code still verifies, and then approved', async () => {
    const h = await start({ credits: 1 })
    const sent = await h.send({ channel: 'sms', recipient: PHONE, expires_in: 600 })
    const id = sent.json.verification_id as string
    const code = h.delivery.lastCode()
    await h.server.storage.settled()
    h.clock.advance(2_000)
    expect((await postReceipt(h, id, 'undelivered')).status).toBe(200)
    const s = await statusOf(h, id)
    expect(s.json).toMatchObject({
      status: 'pending',
      failed_attempts: 0,
      delivery: { status: 'undelivered', provider: 'recording', updated_at: new Date(h.clock.now()).toISOString() },
    })
    const v = await h.verify({ verification_id: id, code })
    expect(v.json).toMatchObject({ success: true, verified: true, message: 'Code verified successfully' })
    expect((await statusOf(h, id)).json).toMatchObject({ status: 'approved', delivery: { status: 'undelivered' } })
  })

  test('a receipt for a canceled verification is recorded, and the status stays canceled', async () => {
    const h = await start({ credits: 1 })
    const id = (await h.send({ channel: 'sms', recipient: PHONE })).json.verification_id as string
    await h.server.storage.settled()
    expect((await h.call(cancelPath(id), undefined, { headers: {} })).status).toBe(200)
    expect((await postReceipt(h, id, 'delivered')).status).toBe(200)
    expect((await statusOf(h, id)).json).toMatchObject({ status: 'canceled', delivery: { status: 'delivered', provider: 'recording' } })
  })
})

describe('a receipt for a delivery whose outcome otpd never learnt', () => {
  test('`unknown` (recovered after a stop during delivery) takes the receipt: delivered, with sent then delivered events; it stays final', async () => {
    const stuck = new StuckDelivery() // the process stops during the delivery
    const h = await start({ credits: 20, delivery: stuck })
    void h.send({ channel: 'sms', recipient: '+14155550123', code: '4321' })
    while (!stuck.seen) await Bun.sleep(5)
    const id = stuck.seen.verificationId
    h.clock.advance(10_000 + RECOVERY_MARGIN_MS + 1)
    expect(await h.server.recover()).toBe(1)
    expect((await statusOf(h, id)).json.delivery).toMatchObject({ status: 'unknown', provider: null })
    expect((await postReceipt(h, id, 'delivered')).status).toBe(200)
    expect((await postReceipt(h, id, 'undelivered')).status).toBe(200)
    const s = await statusOf(h, id)
    expect(s.json).toMatchObject({
      status: 'pending',
      delivery: { status: 'delivered', provider: 'recording', updated_at: new Date(h.clock.now()).toISOString() },
    })
    expect(await eventTypes(h, id)).toEqual(['verification.sent', 'verification.delivered'])
    // Refunded at recovery, as a send left `sending` is; the code still verifies.
    expect((await h.server.admin.balance()).balance).toBe(20)
    expect((await h.verify({ verification_id: id, code: '4321' })).json.verified).toBe(true)
  })

  test('a `failed` delivery (no provider took it, out of use and refunded) takes no receipt', async () => {
    const h = await start({ credits: 20 })
    h.delivery.fail = true
    expect((await h.send({ channel: 'sms', recipient: '+14155550123' })).status).toBe(500)
    await h.server.storage.settled()
    const id = (await h.server.webhooks.events({}))[0]!.verificationId!
    expect((await postReceipt(h, id, 'delivered')).status).toBe(200)
    expect((await statusOf(h, id)).json).toMatchObject({
      status: 'failed',
      delivery: { status: 'failed', provider: null },
    })
    expect(await eventTypes(h, id)).toEqual(['verification.delivery_failed'])
  })
})

describe("a receipt that comes before the provider's own failed answer", () => {
  /** A provider that takes the message, and whose answer then fails (a timeout, a dropped connection). */
  function lateFailure() {
    let seen: OutboundMessage | undefined
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    class Late extends RecordingDelivery {
      override async deliver(m: OutboundMessage): Promise<{ provider: string }> {
        seen = m
        await gate
        throw new Error('no answer within the delivery timeout (test)')
      }
    }
    return { delivery: new Late(), seen: () => seen, release: () => release() }
  }

  for (const key of ['k', null]) {
    test(`the send is in force: 200, charged, verifiable${key ? '; its Idempotency-Key replays that 200, not "in progress"' : ''}`, async () => {
      const late = lateFailure()
      const h = await start({ credits: 2, delivery: late.delivery })
      const body = { channel: 'sms', recipient: PHONE, code: '4321' }
      const pending = h.call(SEND, body, key ? withKey(key) : {})
      while (!late.seen()) await Bun.sleep(5)
      const id = late.seen()!.verificationId
      expect((await postReceipt(h, id, 'delivered')).status).toBe(200)
      late.release()
      const first = await pending
      expect(first.status).toBe(200)
      expect(first.json).toEqual({
        success: true,
        verification_id: id,
        expires_at: new Date(late.seen()!.expiresAt).toISOString(),
        request_id: first.headers.get('x-request-id')!,
      })
      expect((await statusOf(h, id)).json).toMatchObject({ status: 'pending', delivery: { status: 'delivered', provider: 'recording' } })
      expect((await h.server.admin.balance()).balance).toBe(1)
      if (key) {
        const replay = await h.call(SEND, body, withKey(key))
        expect(replay.status).toBe(200)
        expect(replay.json).toEqual(first.json)
        expect(replay.headers.get('idempotent-replayed')).toBe('true')
        expect(replay.headers.get('x-request-id')).toBe(first.json.request_id)
      }
      expect((await h.verify({ verification_id: id, code: '4321' })).json.verified).toBe(true)
      expect(await eventTypes(h)).toEqual(['verification.sent', 'verification.delivered', 'verification.approved'])
    })
  }

  test('a process that stops after the receipt leaves no key "in progress": the receipt settled it with the 200', async () => {
    const stuck = new StuckDelivery() // the process stops during the delivery
    const h1 = await start({ credits: 2, delivery: stuck })
    const body = { channel: 'sms', recipient: PHONE }
    void h1.call(SEND, body, withKey('k'))
    while (!stuck.seen) await Bun.sleep(5)
    const seen = stuck.seen
    const running = await h1.call(SEND, body, withKey('k'))
    expectError(running, 409, 'A request with this Idempotency-Key is still in progress')
    expect(running.headers.get('idempotent-replayed')).toBeNull()
    expect((await postReceipt(h1, seen.verificationId, 'delivered')).status).toBe(200)
    const h2 = await h1.restart()
    h2.clock.advance(60_000)
    expect(await h2.server.recover()).toBe(0) // nothing left `sending`: the receipt said what became of it
    const replay = await h2.call(SEND, body, withKey('k'))
    expect(replay.status).toBe(200)
    expect(replay.json).toMatchObject({ success: true, verification_id: seen.verificationId })
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect((await h2.server.admin.balance()).balance).toBe(1) // delivered: the credit stays spent
  })
})
