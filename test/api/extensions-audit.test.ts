/**
 * EXTENSIONS.md sections 1 and 2, the rules the per-feature tests left
 * uncovered (the audit's list: /work/audit23.md), and how the features meet:
 * a status after a receipt, an Idempotency-Key on GET, the replays that write
 * no event, the unstored 400s of verify and cancel, and a send whose
 * provider's receipt comes before its failed answer.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { webhookSignature } from '../../src/delivery/webhook-provider.ts'
import type { OutboundMessage } from '../../src/otp/types.ts'
import { createHarness, RecordingDelivery, TEST, type Harness, type HarnessOptions, type Result } from '../kit/harness.ts'

let h: Harness | undefined
afterEach(() => {
  h?.close()
  h = undefined
})
const start = async (opts: HarnessOptions = {}) => (h = await createHarness(opts))

const PHONE = '+14155550123'
const SEND = '/api/v1/send'
const VERIFY = '/api/v1/verify'
const cancelPath = (id: string) => `/api/v1/verifications/${id}/cancel`
const statusOf = (h: Harness, id: string, headers: Record<string, string> = {}) => h.call(`/api/v1/verifications/${id}`, undefined, { method: 'GET', headers })

/**
 * Receipts on, with the recording delivery's provider name configured as a
 * webhook provider: a receipt signed with its secret reaches what it took.
 */
const RECEIPT_SECRET = 'whsec-audit-receipts-0123456789'
const RECEIPTS: HarnessOptions = {
  config: {
    server: { public_url: 'https://otp.example.com' },
    providers: { recording: { type: 'webhook', url: 'http://127.0.0.1:9/otp', secret_env: 'RECEIPT_SECRET' } },
  },
  env: { RECEIPT_SECRET },
}

async function receipt(h: Harness, id: string, status: 'delivered' | 'undelivered'): Promise<Result> {
  const body = JSON.stringify({ verification_id: id, status })
  return h.call('/api/v1/receipts/recording', undefined, {
    key: null,
    raw: body,
    headers: { 'x-otpd-signature': webhookSignature(RECEIPT_SECRET, Math.floor(h.clock.now() / 1000), body) },
  })
}

const withKey = (key: string) => ({ headers: { 'idempotency-key': key } })

function expectError(r: Result, code: number, error: string) {
  expect(r.status).toBe(code)
  expect(r.json).toEqual({ error, request_id: r.headers.get('x-request-id')! })
  expect(r.headers.get('idempotent-replayed')).toBeNull()
}

/** The types of the events written so far, oldest first (through the operator's API, not SQL). */
async function eventTypes(h: Harness): Promise<string[]> {
  await h.server.storage.settled()
  return (await h.server.webhooks.events({ limit: 1000 })).map((e) => e.type)
}

describe('section 1: a status after a receipt', () => {
  test('undelivered changes the delivery only: the status stays pending, the code still verifies, and then approved', async () => {
    const h = await start({ credits: 1, ...RECEIPTS })
    const sent = await h.send({ channel: 'sms', recipient: PHONE, expires_in: 600 })
    const id = sent.json.verification_id as string
    const code = h.delivery.lastCode()
    await h.server.storage.settled()
    h.clock.advance(2_000)
    expect((await receipt(h, id, 'undelivered')).status).toBe(200)
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
    const h = await start({ credits: 1, ...RECEIPTS })
    const id = (await h.send({ channel: 'sms', recipient: PHONE })).json.verification_id as string
    await h.server.storage.settled()
    expect((await h.call(cancelPath(id), undefined, { headers: {} })).status).toBe(200)
    expect((await receipt(h, id, 'delivered')).status).toBe(200)
    expect((await statusOf(h, id)).json).toMatchObject({ status: 'canceled', delivery: { status: 'delivered', provider: 'recording' } })
  })
})

describe('section 1: `locked` by the recipient cap, which test recipients are exempt from (DECISIONS.md sections 6, 10)', () => {
  for (const [name, recipient] of [
    ['the SUCCESS test phone', TEST.PHONE_SUCCESS],
    ['the FAIL test phone', TEST.PHONE_FAIL],
  ] as const) {
    test(`${name}: failures past the cap lock neither the status nor verify; its own 15-minute lockout still applies`, async () => {
      const h = await start({ config: { limits: { recipient_failures_per_day: 3, max_failed_attempts: 5 } } })
      const a = (await h.send({ channel: 'sms', recipient })).json.verification_id as string
      for (let i = 0; i < 4; i++) expect((await h.verify({ verification_id: a, code: '000000' })).json.message).toBe('Invalid code')
      expect((await statusOf(h, a)).json).toMatchObject({ status: 'pending', failed_attempts: 4 })
      const b = (await h.send({ channel: 'sms', recipient })).json.verification_id as string
      expect((await statusOf(h, b)).json).toMatchObject({ status: 'pending', failed_attempts: 0 })
      const r = await h.verify({ verification_id: b, code: '123456' })
      expect(r.status).toBe(200)
      expect(r.json.message).toBe(recipient === TEST.PHONE_SUCCESS ? 'Code verified successfully' : 'Invalid code')
      // The fifth failure of one verification is its own lockout, as for any recipient.
      await h.verify({ verification_id: a, code: '000000' })
      expect((await statusOf(h, a)).json).toMatchObject({ status: 'locked', failed_attempts: 5 })
      expect((await h.verify({ verification_id: a, code: '123456' })).status).toBe(429)
    })
  }
})

describe('section 2: Idempotency-Key is for the three POSTs only', () => {
  test('on GET status it is ignored, whatever its value: each read answers afresh, never a replay, never a 400', async () => {
    const h = await start()
    const id = (await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).json.verification_id as string
    const ids = new Set<string>()
    for (const key of ['read-1', 'read-1', '', 'two words']) {
      const r = await statusOf(h, id, { 'idempotency-key': key })
      expect(r.status).toBe(200)
      expect(r.json).toMatchObject({ success: true, verification_id: id, status: 'pending' })
      expect(r.headers.get('idempotent-replayed')).toBeNull()
      expect(r.headers.get('x-request-id')).toBe(r.json.request_id)
      ids.add(r.json.request_id)
    }
    expect(ids.size).toBe(4)
    // A read after an approval shows the change: nothing was stored for it.
    await h.verify({ verification_id: id, code: '123456' })
    expect((await statusOf(h, id, { 'idempotency-key': 'read-1' })).json.status).toBe('approved')
  })
})

describe('section 2: what is not stored, on verify and cancel too', () => {
  test('verify: a 400 is not stored; the fixed request with the same key runs; another body then is 422', async () => {
    const h = await start()
    const id = (await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).json.verification_id as string
    expectError(await h.call(VERIFY, { verification_id: id }, withKey('v')), 400, 'code is required')
    expectError(await h.call(VERIFY, { verification_id: id, code: '12' }, withKey('v')), 400, 'code must be a numeric string between 4-10 digits')
    expectError(await h.call(VERIFY, { code: '123456' }, withKey('v')), 400, 'verification_id is required')
    const first = await h.call(VERIFY, { verification_id: id, code: '123456' }, withKey('v'))
    expect(first.json).toMatchObject({ success: true, verified: true })
    expectError(await h.call(VERIFY, { verification_id: id, code: '654321' }, withKey('v')), 422, 'Idempotency-Key was already used with a different request')
    const again = await h.call(VERIFY, { code: '123456', verification_id: id }, withKey('v'))
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.json).toEqual(first.json)
  })

  test('cancel: a 400 (bad body) and a 401 are not stored; the fixed request with the same key runs', async () => {
    const h = await start()
    const id = (await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).json.verification_id as string
    expectError(await h.call(cancelPath(id), undefined, { raw: '[1]', ...withKey('c') }), 400, 'Request body must be a JSON object')
    expectError(await h.call(cancelPath(id), undefined, { key: 'otpd_' + 'q'.repeat(40), ...withKey('c') }), 401, 'Invalid API key')
    expect((await statusOf(h, id)).json.status).toBe('pending')
    const first = await h.call(cancelPath(id), undefined, { raw: '', ...withKey('c') })
    expect(first.json).toMatchObject({ success: true, verification_id: id, status: 'canceled' })
    expect(first.headers.get('idempotent-replayed')).toBeNull()
  })

  test('a refused Idempotency-Key (400) still counts toward the per-key limit, like any authenticated request', async () => {
    const h = await start({ config: { limits: { key_requests_per_minute: 2 } } })
    expectError(
      await h.call(SEND, { channel: 'sms', recipient: TEST.PHONE_SUCCESS }, withKey('')),
      400,
      'Idempotency-Key must be 1-255 visible ASCII characters',
    )
    expectError(await h.call(cancelPath('x'), undefined, withKey('a b')), 400, 'Idempotency-Key must be 1-255 visible ASCII characters')
    const limited = await h.call(SEND, { channel: 'sms', recipient: TEST.PHONE_SUCCESS }, withKey('ok'))
    expect(limited.status).toBe(429)
    expect(limited.json.error).toBe('Rate limit exceeded: Maximum 2 requests per minute. Please try again in 60 seconds.')
    expect(limited.headers.get('retry-after')).toBe('60')
  })
})

describe('section 2 meets section 3: a replay runs nothing, so it writes no event', () => {
  test('replays of a send, a wrong code, a right code and a cancel add no event', async () => {
    const h = await start({ credits: 3 })
    const body = { channel: 'sms', recipient: PHONE }
    const sent = await h.call(SEND, body, withKey('s'))
    const id = sent.json.verification_id as string
    const code = h.delivery.lastCode()
    await h.server.storage.settled()
    for (let i = 0; i < 3; i++) expect((await h.call(SEND, body, withKey('s'))).headers.get('idempotent-replayed')).toBe('true')
    expect(await eventTypes(h)).toEqual(['verification.sent'])
    const wrong = { verification_id: id, code: code === '000000' ? '111111' : '000000' }
    for (let i = 0; i < 3; i++) expect((await h.call(VERIFY, wrong, withKey('w'))).json.message).toBe('Invalid code')
    expect(await eventTypes(h)).toEqual(['verification.sent', 'verification.attempt_failed'])
    const other = (await h.send({ channel: 'sms', recipient: '+14155550124' })).json.verification_id as string
    await h.server.storage.settled()
    for (let i = 0; i < 3; i++) expect((await h.call(cancelPath(other), undefined, withKey('c'))).status).toBe(200)
    for (let i = 0; i < 3; i++) expect((await h.call(VERIFY, { verification_id: id, code }, withKey('r'))).json.verified).toBe(true)
    expect(await eventTypes(h)).toEqual([
      'verification.sent',
      'verification.attempt_failed',
      'verification.sent',
      'verification.canceled',
      'verification.approved',
    ])
  })

  test('a replayed test-recipient send writes no second verification.sent', async () => {
    const h = await start()
    for (let i = 0; i < 3; i++) await h.call(SEND, { channel: 'email', recipient: TEST.EMAIL_SUCCESS }, withKey('t'))
    expect(await eventTypes(h)).toEqual(['verification.sent'])
  })
})

describe("section 4 meets sections 1-2: the provider's receipt comes before its own failed answer", () => {
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
      const h = await start({ credits: 2, delivery: late.delivery, ...RECEIPTS })
      const body = { channel: 'sms', recipient: PHONE, code: '4321' }
      const pending = h.call(SEND, body, key ? withKey(key) : {})
      while (!late.seen()) await Bun.sleep(5)
      const id = late.seen()!.verificationId
      expect((await receipt(h, id, 'delivered')).status).toBe(200)
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
    let seen: OutboundMessage | undefined
    class Stuck extends RecordingDelivery {
      override async deliver(m: OutboundMessage): Promise<{ provider: string }> {
        seen = m
        return new Promise(() => {}) // the process stops during the delivery
      }
    }
    const h1 = await start({ credits: 2, delivery: new Stuck(), ...RECEIPTS })
    const body = { channel: 'sms', recipient: PHONE }
    void h1.call(SEND, body, withKey('k'))
    while (!seen) await Bun.sleep(5)
    expectError(await h1.call(SEND, body, withKey('k')), 409, 'A request with this Idempotency-Key is still in progress')
    expect((await receipt(h1, seen.verificationId, 'delivered')).status).toBe(200)
    const h2 = await h1.restart()
    h = h2
    h2.clock.advance(60_000)
    expect(await h2.server.recover()).toBe(0) // nothing left `sending`: the receipt said what became of it
    const replay = await h2.call(SEND, body, withKey('k'))
    expect(replay.status).toBe(200)
    expect(replay.json).toMatchObject({ success: true, verification_id: seen.verificationId })
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect((await h2.server.admin.balance()).balance).toBe(1) // delivered: the credit stays spent
  })
})
