/**
 * EXTENSIONS.md sections 3 and 4, the rules the per-feature tests left
 * uncovered (the audit's list: /work/audit23.md): no expiry for a canceled
 * verification, the expiry reported by the running loop within 2 min, any 2xx
 * is success and nothing else is, the 10 s timeout, `account` and the
 * per-account endpoints, `webhook-timestamp`, `otpd events replay --failed`,
 * and a receipt for a delivery whose outcome otpd never learnt (`unknown`).
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { webhookSignature } from '../../src/delivery/webhook-provider.ts'
import { ManualClock } from '../../src/lib/clock.ts'
import { RECOVERY_MARGIN_MS } from '../../src/otp/recovery.ts'
import type { OutboundMessage } from '../../src/otp/types.ts'
import { cleanUpAfterEach, cliEnv } from '../kit/cli.ts'
import { createHarness, HOUR, MINUTE, RecordingDelivery, TEST, type Harness, type HarnessOptions } from '../kit/harness.ts'
import { signatureValid, startReceiver, type Receiver } from '../kit/webhook-receiver.ts'

cleanUpAfterEach()
const open: { h: Harness[]; stop: (() => void)[] } = { h: [], stop: [] }
afterEach(async () => {
  for (const h of open.h.splice(0)) {
    await h.server.events.stop()
    h.close()
  }
  for (const stop of open.stop.splice(0)) stop()
})

const RECEIPT_SECRET = 'whsec-audit-events-0123456789ab'
const RECEIPTS: HarnessOptions = {
  config: {
    server: { public_url: 'https://otp.example.com' },
    providers: { recording: { type: 'webhook', url: 'http://127.0.0.1:9/otp', secret_env: 'RECEIPT_SECRET' } },
  },
  env: { RECEIPT_SECRET },
}

async function harness(opts: HarnessOptions = {}): Promise<Harness> {
  const h = await createHarness({ credits: 20, ...RECEIPTS, ...opts })
  open.h.push(h)
  // The first expiry scan starts the cursor (serve runs it at start).
  await h.server.events.scanExpired(true)
  return h
}

function receiver(): Receiver {
  const rx = startReceiver()
  open.stop.push(() => rx.stop())
  return rx
}

async function deliver(h: Harness): Promise<number> {
  await h.server.storage.settled()
  let n = 0
  for (let tried = await h.server.events.deliverDue(); tried > 0; tried = await h.server.events.deliverDue()) n += tried
  return n
}

/** The types of a verification's events, oldest first (through the operator's API, not SQL). */
async function eventsOf(h: Harness, id: string): Promise<string[]> {
  await h.server.storage.settled()
  return (await h.server.webhooks.events({ limit: 1000 })).filter((e) => e.verificationId === id).map((e) => e.type)
}

/** The `data` of a verification's events as a receiver got them, by sequence. */
async function dataOf(h: Harness, rx: Receiver, id: string): Promise<Record<string, any>[]> {
  await deliver(h)
  return rx.received
    .map((r) => r.json.data)
    .filter((d) => d.verification_id === id)
    .sort((a, b) => a.sequence - b.sequence)
}

const sendSms = async (h: Harness, recipient = '+14155550123', extra: Record<string, unknown> = {}) => {
  const r = await h.send({ channel: 'sms', recipient, ...extra })
  expect(r.status).toBe(200)
  await h.server.storage.settled()
  return r.json.verification_id as string
}

describe('section 3: verification.expired is for a verification that expired unused', () => {
  test('not for a canceled one (pending or locked when canceled); yes for a locked one left to expire', async () => {
    const h = await harness()
    const canceled = await sendSms(h, '+14155550101', { expires_in: 60 })
    expect((await h.call(`/api/v1/verifications/${canceled}/cancel`, undefined, { headers: {} })).status).toBe(200)
    const lockedThenCanceled = await sendSms(h, '+14155550102', { expires_in: 60 })
    for (let i = 0; i < 5; i++) await h.verify({ verification_id: lockedThenCanceled, code: '00000000' })
    expect((await h.call(`/api/v1/verifications/${lockedThenCanceled}/cancel`, undefined, { headers: {} })).status).toBe(200)
    const locked = await sendSms(h, '+14155550103', { expires_in: 60 })
    for (let i = 0; i < 5; i++) await h.verify({ verification_id: locked, code: '00000000' })
    h.clock.advance(2 * MINUTE)
    expect(await h.server.events.scanExpired(true)).toBe(1)
    expect(await eventsOf(h, canceled)).toEqual(['verification.sent', 'verification.canceled'])
    expect((await eventsOf(h, lockedThenCanceled)).filter((t) => t !== 'verification.attempt_failed')).toEqual([
      'verification.sent',
      'verification.locked',
      'verification.canceled',
    ])
    expect((await eventsOf(h, locked)).at(-1)).toBe('verification.expired')
  })

  test('the running loop reports an expiry on its own, within 2 min of expires_at', async () => {
    const h = await harness()
    const rx = receiver()
    await h.server.webhooks.add({ url: rx.url, events: 'verification.expired' })
    const id = await sendSms(h, '+14155550123', { expires_in: 60 })
    const expiresAt = h.clock.now() + 60_000
    h.server.events.start()
    await Bun.sleep(1_200)
    expect(rx.received).toHaveLength(0)
    h.clock.set(expiresAt + 1_000)
    const got = await Promise.race([rx.arrival(1), Bun.sleep(5_000).then(() => null)])
    expect(got).not.toBeNull()
    expect(got!.json).toMatchObject({ type: 'verification.expired', data: { verification_id: id, status: 'expired' } })
    const lag = Date.parse(got!.json.occurred_at) - expiresAt
    expect(lag).toBeGreaterThanOrEqual(0)
    expect(lag).toBeLessThanOrEqual(2 * MINUTE)
  }, 15_000)
})

describe("section 3: a lockout of the recipient's failure cap (section 1 `locked`, DECISIONS.md section 10)", () => {
  test('the failure that fills the cap reports status locked and starts verification.locked with the wait verify then answers', async () => {
    const h = await harness({ config: { ...RECEIPTS.config, limits: { recipient_failures_per_day: 3, max_failed_attempts: 100 } } })
    const rx = receiver()
    await h.server.webhooks.add({ url: rx.url })
    const t0 = h.clock.now()
    const first = await sendSms(h, '+14155550123', { expires_in: 3600 })
    await h.verify({ verification_id: first, code: '00000000' })
    h.clock.advance(MINUTE)
    const second = await sendSms(h, '+14155550123', { expires_in: 3600 })
    await h.verify({ verification_id: second, code: '00000000' })
    h.clock.advance(MINUTE)
    await h.verify({ verification_id: second, code: '00000000' }) // the 3rd failure of the recipient: the cap is full
    const wait = (t0 + 24 * HOUR - h.clock.now()) / 1000
    expect((await dataOf(h, rx, second)).map((d) => [d.sequence, d.status, d.failed_attempts ?? d.retry_after ?? null])).toEqual([
      [1, 'pending', null],
      [2, 'pending', 1],
      [3, 'locked', 2],
      [4, 'locked', wait],
    ])
    expect(await eventsOf(h, second)).toEqual(['verification.sent', 'verification.attempt_failed', 'verification.attempt_failed', 'verification.locked'])
    // What GET and verify say agree with the events.
    expect((await h.call(`/api/v1/verifications/${second}`, undefined, { method: 'GET' })).json.status).toBe('locked')
    const v = await h.verify({ verification_id: second, code: '00000000' })
    expect([v.status, v.json.retry_after]).toEqual([429, wait])
  })

  test('its own lockout and the cap at once: retry_after is the longer wait', async () => {
    const h = await harness({ config: { ...RECEIPTS.config, limits: { recipient_failures_per_day: 5, max_failed_attempts: 5 } } })
    const rx = receiver()
    await h.server.webhooks.add({ url: rx.url })
    const id = await sendSms(h, '+14155550123', { expires_in: 3600 })
    for (let i = 0; i < 5; i++) await h.verify({ verification_id: id, code: '00000000' })
    expect((await dataOf(h, rx, id)).filter((d) => d.retry_after !== undefined).map((d) => [d.status, d.retry_after])).toEqual([['locked', 86_400]])
  })

  test('a test recipient is exempt from the cap: only its own lockout reports locked', async () => {
    const h = await harness({ config: { ...RECEIPTS.config, limits: { recipient_failures_per_day: 2, max_failed_attempts: 5 } } })
    const rx = receiver()
    await h.server.webhooks.add({ url: rx.url })
    const id = (await h.send({ channel: 'sms', recipient: TEST.PHONE_FAIL })).json.verification_id as string
    for (let i = 0; i < 5; i++) await h.verify({ verification_id: id, code: '123456' })
    expect((await dataOf(h, rx, id)).map((d) => [d.status, d.test, d.failed_attempts ?? d.retry_after ?? null])).toEqual([
      ['pending', true, null],
      ['pending', true, 1],
      ['pending', true, 2],
      ['pending', true, 3],
      ['pending', true, 4],
      ['locked', true, 5],
      ['locked', true, 900],
    ])
  })
})

describe('section 3: delivery', () => {
  /** A receiver that answers the given statuses in turn, with no body (so 204 and 304 are real). */
  function statusReceiver(statuses: number[]) {
    const seen: { id: string; timestamp: string; signature: string; body: string }[] = []
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch(req) {
        seen.push({
          id: req.headers.get('webhook-id')!,
          timestamp: req.headers.get('webhook-timestamp')!,
          signature: req.headers.get('webhook-signature')!,
          body: await req.text(),
        })
        const status = statuses.shift() ?? 200
        return status === 302 ? new Response(null, { status, headers: { location: 'http://127.0.0.1:9/elsewhere' } }) : new Response(null, { status })
      },
    })
    open.stop.push(() => void server.stop(true))
    return { url: `http://127.0.0.1:${server.port}/hook`, seen }
  }

  test('any 2xx is success (200, 201, 202, 204, 299)', async () => {
    for (const status of [200, 201, 202, 204, 299]) {
      const h = await harness()
      const rx = statusReceiver([status])
      await h.server.webhooks.add({ url: rx.url })
      await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
      expect(await deliver(h)).toBe(1)
      expect((await h.server.webhooks.events({})).map((e) => [e.status, e.attempts])).toEqual([['delivered', 1]])
    }
  })

  test('anything else is a failed try, retried with the same webhook-id and a fresh timestamp: a 3xx (not followed), a 4xx, a 5xx', async () => {
    const h = await harness()
    const rx = statusReceiver([302, 304, 410, 500])
    const endpoint = await h.server.webhooks.add({ url: rx.url })
    await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
    const errors: (string | null)[] = []
    for (let i = 0; i < 5; i++) {
      expect(await deliver(h)).toBe(1)
      errors.push((await h.server.webhooks.events({}))[0]!.lastError)
      h.clock.advance(2 * HOUR)
    }
    expect(errors).toEqual(['HTTP 302', 'HTTP 304', 'HTTP 410', 'HTTP 500', null])
    expect(rx.seen).toHaveLength(5)
    expect(new Set(rx.seen.map((s) => s.id)).size).toBe(1)
    // webhook-timestamp is the unix time (in seconds) of each try, and each signature is valid for it.
    const t0 = Date.UTC(2026, 0, 1, 12, 0, 0) / 1000
    expect(rx.seen.map((s) => Number(s.timestamp) - t0)).toEqual([0, 7200, 14400, 21600, 28800])
    for (const s of rx.seen) expect(await signatureValid(endpoint.secret, s, s.signature)).toBe(true)
    expect((await h.server.webhooks.events({}))[0]!.status).toBe('delivered')
  })

  test('no answer within 10 s is a failed try, retried later with the same webhook-id', async () => {
    const h = await harness()
    const rx = receiver()
    let release!: () => void
    rx.hold = new Promise((r) => (release = r))
    await h.server.webhooks.add({ url: rx.url })
    await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
    const started = Date.now()
    expect(await deliver(h)).toBe(1)
    const took = Date.now() - started
    release()
    expect(took).toBeGreaterThanOrEqual(9_900)
    expect(took).toBeLessThan(14_000)
    const [e] = await h.server.webhooks.events({})
    expect([e!.status, e!.attempts, e!.lastError]).toEqual(['pending', 1, 'no answer within 10 s'])
    rx.hold = null
    h.clock.advance(MINUTE)
    expect(await deliver(h)).toBe(1)
    expect(rx.received.map((r) => r.id)).toEqual([e!.id, e!.id])
    expect((await h.server.webhooks.events({}))[0]!.status).toBe('delivered')
  }, 30_000)
})

describe('section 3: accounts', () => {
  test("an endpoint gets its own account's events only, and the body names that account", async () => {
    const h = await harness()
    await h.server.admin.createAccount('acme')
    const acmeKey = (await h.server.admin.createKey({ account: 'acme' })).key
    const mine = receiver()
    const theirs = receiver()
    await h.server.webhooks.add({ url: mine.url })
    await h.server.webhooks.add({ url: theirs.url, account: 'acme' })
    const a = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
    const b = await h.send({ channel: 'email', recipient: TEST.EMAIL_SUCCESS }, acmeKey)
    await deliver(h)
    expect(mine.received.map((r) => [r.json.account, r.json.data.verification_id])).toEqual([['default', a.json.verification_id]])
    expect(theirs.received.map((r) => [r.json.account, r.json.data.verification_id, r.json.data.test])).toEqual([['acme', b.json.verification_id, true]])
  })
})

test('section 3: `otpd events replay --failed` puts every failed delivery back, with its event id', async () => {
  const env = cliEnv()
  const h = await createHarness({ dir: env.dir, databaseUrl: env.databaseUrl, clock: new ManualClock(Date.now()) })
  open.h.push(h)
  const rx = receiver()
  rx.statuses.push(...Array(200).fill(500))
  await h.server.webhooks.add({ url: rx.url })
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  for (let i = 0; i < 400 && (await h.server.webhooks.events({}))[0]!.status === 'pending'; i++) {
    await deliver(h)
    h.clock.advance(5 * MINUTE)
  }
  const [failed] = await h.server.webhooks.events({})
  expect(failed!.status).toBe('failed')
  const r = env.run('events', 'replay', '--failed')
  expect([r.code, r.stdout]).toEqual([0, '1 failed delivery of 1 event will be sent again by the running server\n'])
  expect(env.json('events', 'list', '--status', 'pending').map((e: { id: string }) => e.id)).toEqual([failed!.id])
  rx.statuses.length = 0
  h.clock.advance(MINUTE)
  await deliver(h)
  expect(rx.received.at(-1)!.id).toBe(failed!.id)
  expect((await h.server.webhooks.events({}))[0]!.status).toBe('delivered')
}, 60_000)

describe('section 4: a receipt for a delivery whose outcome otpd never learnt', () => {
  test('`unknown` (recovered after a stop during delivery) takes the receipt: delivered, with sent then delivered events; it stays final', async () => {
    let seen: OutboundMessage | undefined
    class Stuck extends RecordingDelivery {
      override async deliver(m: OutboundMessage): Promise<{ provider: string }> {
        seen = m
        return new Promise(() => {}) // the process "stops" during the delivery
      }
    }
    const h = await harness({ delivery: new Stuck() })
    void h.send({ channel: 'sms', recipient: '+14155550123', code: '4321' })
    while (!seen) await Bun.sleep(5)
    const id = seen.verificationId
    h.clock.advance(10_000 + RECOVERY_MARGIN_MS + 1)
    expect(await h.server.recover()).toBe(1)
    expect((await h.call(`/api/v1/verifications/${id}`, undefined, { method: 'GET' })).json.delivery).toMatchObject({ status: 'unknown', provider: null })
    const post = async (status: string) => {
      const body = JSON.stringify({ verification_id: id, status })
      const r = await h.call('/api/v1/receipts/recording', undefined, {
        key: null,
        raw: body,
        headers: { 'x-otpd-signature': webhookSignature(RECEIPT_SECRET, Math.floor(h.clock.now() / 1000), body) },
      })
      expect(r.status).toBe(200)
    }
    await post('delivered')
    await post('undelivered')
    const s = await h.call(`/api/v1/verifications/${id}`, undefined, { method: 'GET' })
    expect(s.json).toMatchObject({
      status: 'pending',
      delivery: { status: 'delivered', provider: 'recording', updated_at: new Date(h.clock.now()).toISOString() },
    })
    expect(await eventsOf(h, id)).toEqual(['verification.sent', 'verification.delivered'])
    // Refunded at recovery, as section 1 says; the code still verifies.
    expect((await h.server.admin.balance()).balance).toBe(20)
    expect((await h.verify({ verification_id: id, code: '4321' })).json.verified).toBe(true)
  })

  test('a `failed` delivery (no provider took it, out of use and refunded) takes no receipt', async () => {
    const h = await harness()
    h.delivery.fail = true
    expect((await h.send({ channel: 'sms', recipient: '+14155550123' })).status).toBe(500)
    await h.server.storage.settled()
    const id = (await h.server.webhooks.events({}))[0]!.verificationId!
    const body = JSON.stringify({ verification_id: id, status: 'delivered' })
    const r = await h.call('/api/v1/receipts/recording', undefined, {
      key: null,
      raw: body,
      headers: { 'x-otpd-signature': webhookSignature(RECEIPT_SECRET, Math.floor(h.clock.now() / 1000), body) },
    })
    expect(r.status).toBe(200)
    expect((await h.call(`/api/v1/verifications/${id}`, undefined, { method: 'GET' })).json).toMatchObject({
      status: 'failed',
      delivery: { status: 'failed', provider: null },
    })
    expect(await eventsOf(h, id)).toEqual(['verification.delivery_failed'])
  })
})

describe('sections 1 and 3: a cancel while the delivery is under way', () => {
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
      const h = await harness({ delivery: d.delivery, credits: 1 })
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
      await deliver(h)
      const events = rx.received.filter((r) => r.json.data.verification_id === id).map((r) => [r.json.type, r.json.data.status])
      expect(events).toEqual([
        ['verification.canceled', 'canceled'],
        [fail ? 'verification.delivery_failed' : 'verification.sent', 'canceled'],
      ])
    })
  }
})
