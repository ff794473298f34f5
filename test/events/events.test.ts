/**
 * Events (docs/api.md#events) against a real HTTP receiver on loopback
 * that checks every signature independently (test/kit/webhook-receiver.ts):
 * one row per event type, the body's exact fields, the retry schedule on the
 * injected clock, rotation, replay, the outbox's atomicity and leases.
 */
import { expect, test } from 'bun:test'
import { harnessPerTest, HOUR, MINUTE, ON_PG, TEST, UUID_V4, type Harness } from '../kit/harness.ts'
import { receiverPerTest, signatureValid, type Received } from '../kit/webhook-receiver.ts'
import { deliverEvents } from '../kit/events.ts'
import { postReceipt, RECORDING_RECEIPTS } from '../kit/receipts.ts'
import { emit } from '../../src/otp/events.ts'
import type { EventType } from '../../src/otp/ports/index.ts'

const start = harnessPerTest()
const receiver = receiverPerTest()

/** The provider's signed receipt for `id` (200 whatever it changed). */
async function receipt(h: Harness, id: string, status: 'delivered' | 'undelivered'): Promise<void> {
  await h.server.storage.settled()
  expect((await postReceipt(h, id, status)).status).toBe(200)
}

/** Receipts on (RECORDING_RECEIPTS), one endpoint on a receiver, the expiry scan started. */
async function setup(opts: { events?: string } = {}) {
  const h = await start({ credits: 100, ...RECORDING_RECEIPTS })
  const rx = receiver()
  const endpoint = await h.server.webhooks.add({ url: rx.url, events: opts.events })
  // The first expiry scan starts the cursor (serve runs it at start).
  await h.server.events.scanExpired(true)
  return { h, rx, endpoint, secret: endpoint.secret }
}

async function expectSigned(secret: string, r: Received): Promise<void> {
  expect(r.id).toMatch(UUID_V4)
  expect(r.id).toBe(r.json.id)
  expect(r.timestamp).toMatch(/^[0-9]+$/)
  expect(r.signatures).toHaveLength(1)
  expect(await signatureValid(secret, r, r.signatures[0]!)).toBe(true)
}

/** A send, once its outcome (and `verification.sent`) is written: it lands after the answer, and a verify could come first. */
const sendSms = async (h: Harness, recipient = '+14155550123') => {
  const sent = await h.send({ channel: 'sms', recipient })
  await h.server.storage.settled()
  return sent
}
/** A wrong code for the last delivered one (200, `verified: false`). */
const wrong = (h: Harness, id: string) => h.verify({ verification_id: id, code: h.delivery.lastCode() === '000000' ? '111111' : '000000' })

interface Row {
  type: EventType
  /** Makes the change; returns the verification id (null for `send.blocked`). */
  act: (h: Harness) => Promise<string | null>
  /** `data.status` (null for `send.blocked`). */
  status: string | null
  extra: Record<string, unknown>
  test?: boolean
  /** `data.channel` and `data.recipient`: `sms` and `+1415****123` unless given. */
  channel?: string | null
  recipient?: string | null
}

// One row per event type.
const ROWS: Row[] = [
  {
    type: 'verification.canceled',
    act: async (h) => {
      const id = (await sendSms(h)).json.verification_id
      expect((await h.call(`/api/v1/verifications/${id}/cancel`, undefined, { headers: {} })).status).toBe(200)
      return id
    },
    status: 'canceled',
    extra: {},
  },
  {
    type: 'verification.sent',
    act: async (h) => (await sendSms(h)).json.verification_id,
    status: 'pending',
    extra: { provider: 'recording', encoding: 'GSM-7', segments: 1 },
  },
  {
    type: 'verification.sent',
    act: async (h) => (await h.send({ channel: 'email', recipient: TEST.EMAIL_SUCCESS })).json.verification_id,
    status: 'pending',
    extra: { provider: null },
    test: true,
    channel: 'email',
    recipient: 's*****s@otpd.test',
  },
  {
    type: 'verification.delivered',
    act: async (h) => {
      const id = (await sendSms(h)).json.verification_id
      await receipt(h, id, 'delivered')
      return id
    },
    status: 'pending',
    extra: { provider: 'recording' },
  },
  {
    type: 'verification.undelivered',
    act: async (h) => {
      const id = (await sendSms(h)).json.verification_id
      await receipt(h, id, 'undelivered')
      return id
    },
    status: 'pending',
    extra: { provider: 'recording' },
  },
  {
    type: 'verification.delivery_failed',
    act: async (h) => {
      h.delivery.fail = true
      const r = await sendSms(h)
      expect(r.status).toBe(500)
      return (await h.server.webhooks.events({}))[0]!.verificationId!
    },
    status: 'failed',
    extra: {},
  },
  {
    type: 'verification.approved',
    act: async (h) => {
      const id = (await sendSms(h)).json.verification_id
      expect((await h.verify({ verification_id: id, code: h.delivery.lastCode() })).status).toBe(200)
      return id
    },
    status: 'approved',
    extra: {},
  },
  {
    type: 'verification.attempt_failed',
    act: async (h) => {
      const id = (await sendSms(h)).json.verification_id
      expect((await wrong(h, id)).json.message).toBe('Invalid code')
      return id
    },
    status: 'pending',
    extra: { failed_attempts: 1 },
  },
  {
    type: 'verification.locked',
    act: async (h) => {
      const id = (await sendSms(h)).json.verification_id
      for (let i = 0; i < 5; i++) await wrong(h, id)
      return id
    },
    status: 'locked',
    extra: { retry_after: 900 },
  },
  {
    type: 'verification.expired',
    act: async (h) => {
      const id = (await sendSms(h)).json.verification_id
      h.clock.advance(5 * MINUTE)
      expect(await h.server.events.scanExpired(true)).toBe(1)
      return id
    },
    status: 'expired',
    extra: {},
  },
  {
    type: 'verification.expired',
    act: async (h) => (await h.send({ channel: 'sms', recipient: TEST.PHONE_EXPIRED })).json.verification_id,
    status: 'expired',
    extra: {},
    test: true,
    recipient: '+1555****003',
  },
]

ROWS.push({
  type: 'send.blocked',
  act: async (h) => {
    // Rule 5 applies in every mode (the harness runs the guard `off`).
    await h.server.fraud.setAccount('default', { dailyCreditLimit: 1 })
    expect((await sendSms(h)).status).toBe(200)
    expect((await sendSms(h, '+14155550124')).status).toBe(429)
    return null
  },
  status: null,
  recipient: '+1415****124',
  extra: { rule: 'daily_credit', country: 'US', prefix: '+1415***' },
})

for (const row of ROWS) {
  test(`${row.type}${row.test ? ' (test recipient)' : ''} is received with a valid signature and the exact body`, async () => {
    const { h, rx, secret } = await setup()
    const id = await row.act(h)
    await h.server.events.scanExpired(true)
    await deliverEvents(h)
    const got = rx.received.filter((r) => r.json.type === row.type)
    expect(got).toHaveLength(1)
    const r = got[0]!
    await expectSigned(secret, r)
    if (id === null) expect(r.json.data.sequence).toBe(0)
    else {
      const all = rx.received.filter((x) => x.json.data.verification_id === id).sort((a, b) => a.json.data.sequence - b.json.data.sequence)
      expect(all.map((x) => x.json.data.sequence)).toEqual(all.map((_, i) => i + 1))
    }
    expect(r.json).toEqual({
      id: r.id,
      type: row.type,
      occurred_at: new Date(h.clock.now()).toISOString(),
      account: 'default',
      data: {
        verification_id: id,
        channel: row.channel === undefined ? 'sms' : row.channel,
        recipient: row.recipient === undefined ? '+1415****123' : row.recipient,
        status: row.status,
        sequence: r.json.data.sequence,
        test: row.test ?? false,
        ...row.extra,
      },
    })
  })
}

test('sequence counts the events of one verification from 1, in order', async () => {
  const { h, rx } = await setup()
  const id = (await sendSms(h)).json.verification_id
  await h.server.storage.settled()
  await wrong(h, id)
  await h.verify({ verification_id: id, code: h.delivery.lastCode() })
  await deliverEvents(h)
  expect(rx.received.map((r) => [r.json.type, r.json.data.sequence, r.json.data.status])).toEqual([
    ['verification.sent', 1, 'pending'],
    ['verification.attempt_failed', 2, 'pending'],
    ['verification.approved', 3, 'approved'],
  ])
})

test('an endpoint gets only its subscribed types; an event with no endpoint is still listed', async () => {
  const { h, rx } = await setup({ events: 'verification.approved' })
  const id = (await sendSms(h)).json.verification_id
  await h.verify({ verification_id: id, code: h.delivery.lastCode() })
  await deliverEvents(h)
  expect(rx.received.map((r) => r.json.type)).toEqual(['verification.approved'])
  const listed = await h.server.webhooks.events({})
  expect(listed.map((e) => [e.type, e.status])).toEqual([
    ['verification.sent', 'none'],
    ['verification.approved', 'delivered'],
  ])
})

test('a receiver that fails 3 times gets the event on the 4th try, with the same webhook-id, on the 30 s doubling schedule', async () => {
  const { h, rx, secret } = await setup()
  rx.statuses.push(500, 503, 404)
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  expect(await deliverEvents(h)).toBe(1)
  for (const wait of [30_000, 60_000, 120_000]) {
    h.clock.advance(wait - 1)
    expect(await deliverEvents(h)).toBe(0)
    h.clock.advance(wait * 0.1 + 1)
    expect(await deliverEvents(h)).toBe(1)
  }
  expect(await deliverEvents(h)).toBe(0)
  expect(rx.received).toHaveLength(4)
  expect(new Set(rx.received.map((r) => r.id)).size).toBe(1)
  expect(new Set(rx.received.map((r) => r.body)).size).toBe(1)
  // Signed afresh: each try its own timestamp, each signature valid.
  expect(new Set(rx.received.map((r) => r.timestamp)).size).toBe(4)
  for (const r of rx.received) await expectSigned(secret, r)
  const [e] = await h.server.webhooks.events({})
  expect([e!.status, e!.attempts, e!.lastError]).toEqual(['delivered', 4, null])
  const metrics = await h.server.metrics.render()
  expect(metrics).toContain('otpd_webhook_deliveries_total{outcome="retry"} 3')
  expect(metrics).toContain('otpd_webhook_deliveries_total{outcome="delivered"} 1')
  expect(metrics).toContain('otpd_webhook_outbox_depth 0')
})

test('tries stop 24 h after the first (at most 1 h apart): the event is failed; replay --failed sends it again with its id', async () => {
  const { h, rx } = await setup()
  rx.statuses.push(...Array(100).fill(500))
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  const start = h.clock.now()
  const times: number[] = []
  for (let i = 0; i < 400 && (await h.server.webhooks.events({}))[0]!.status === 'pending'; i++) {
    if ((await deliverEvents(h)) > 0) times.push(h.clock.now())
    h.clock.advance(5 * MINUTE)
  }
  const gaps = times.slice(1).map((t, i) => t - times[i]!)
  expect(Math.max(...gaps)).toBeLessThanOrEqual(HOUR + 5 * MINUTE)
  expect(Math.max(...gaps)).toBeGreaterThanOrEqual(HOUR)
  expect(times.at(-1)! - start).toBeLessThanOrEqual(24 * HOUR)
  expect(times.at(-1)! - start).toBeGreaterThan(23 * HOUR)
  expect((await h.server.webhooks.events({ status: 'failed' })).map((e) => e.status)).toEqual(['failed'])
  expect(await h.server.metrics.render()).toContain('otpd_webhook_deliveries_total{outcome="failed"} 1')
  const id = rx.received[0]!.id
  rx.statuses.length = 0
  expect(await h.server.webhooks.replayFailed()).toEqual({ events: 1, deliveries: 1 })
  expect(await h.server.webhooks.events({ status: 'failed' })).toEqual([])
  expect(await deliverEvents(h)).toBe(1)
  expect(rx.received.at(-1)!.id).toBe(id)
  expect((await h.server.webhooks.events({ status: 'delivered' })).map((e) => e.id)).toEqual([id])
})

test('a rotated secret: both signatures (new first) verify for 24 h, then only the new one', async () => {
  const { h, rx, endpoint, secret: old } = await setup()
  const { secret: fresh } = await h.server.webhooks.rotateSecret(String(endpoint.id))
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  await deliverEvents(h)
  const r = rx.received[0]!
  expect(r.signatures).toHaveLength(2)
  expect(await signatureValid(fresh, r, r.signatures[0]!)).toBe(true)
  expect(await signatureValid(old, r, r.signatures[1]!)).toBe(true)
  expect(await signatureValid(old, r, r.signatures[0]!)).toBe(false)
  h.clock.advance(24 * HOUR)
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  await deliverEvents(h)
  const later = rx.received[1]!
  expect(later.signatures).toHaveLength(1)
  expect(await signatureValid(fresh, later, later.signatures[0]!)).toBe(true)
})

test('a replay sends the same id and body again, signed afresh', async () => {
  const { h, rx, secret } = await setup()
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  await deliverEvents(h)
  h.clock.advance(MINUTE)
  const first = rx.received[0]!
  expect((await h.server.webhooks.replay(first.id)).deliveries).toBe(1)
  expect((await h.server.webhooks.events({}))[0]!.status).toBe('pending')
  await deliverEvents(h)
  const again = rx.received[1]!
  expect([again.id, again.body]).toEqual([first.id, first.body])
  expect(again.timestamp).not.toBe(first.timestamp)
  await expectSigned(secret, again)
})

test('no event exists for a change that was rolled back', async () => {
  const { h, rx } = await setup()
  const sent = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  await deliverEvents(h)
  const before = (await h.server.webhooks.events({})).length
  const [row] = await h.sql('SELECT seq, key_id AS "keyId" FROM verifications')
  const v = await h.server.storage.read((r) => r.verifications.findForKey(sent.json.verification_id, Number(row!.seq), Number(row!.keyId)))
  expect(v?.id).toBe(sent.json.verification_id)
  await expect(
    h.server.storage.write(async (r) => {
      await emit(r, 'verification.approved', v!, h.clock.now())
      throw new Error('the change failed')
    }),
  ).rejects.toThrow('the change failed')
  expect(await h.server.webhooks.events({})).toHaveLength(before)
  expect(await deliverEvents(h)).toBe(0)
  expect(rx.received).toHaveLength(1)
})

test('two servers on one database: a leased delivery is sent by one of them at a time', async () => {
  const { h, rx } = await setup()
  const other = await start({ dir: h.dir, key: h.key, clock: h.clock })
  let release!: () => void
  rx.hold = new Promise((r) => (release = r))
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  const both = Promise.all([deliverEvents(h), deliverEvents(other)])
  await rx.arrival(1)
  // A fixed wait: the other server must have had its chance to send the leased delivery a second time.
  await Bun.sleep(200)
  release()
  expect((await both).reduce((a, b) => a + b)).toBe(1)
  expect(rx.received).toHaveLength(1)
})

test('secrets are sealed in the database and never logged', async () => {
  const { h, secret } = await setup()
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  await deliverEvents(h)
  await h.server.storage.settled()
  const raw = secret.slice('whsec_'.length)
  const keyBytes = Buffer.from(raw, 'base64')
  const files = ['otpd.db', 'otpd.db-wal'].map((f) => Bun.file(`${h.dir}/${f}`))
  for (const f of files) {
    if (!(await f.exists())) continue
    const bytes = Buffer.from(await f.arrayBuffer())
    expect(bytes.includes(Buffer.from(raw))).toBe(false)
    expect(bytes.includes(keyBytes)).toBe(false)
  }
  expect(h.logs.join('\n')).not.toContain(raw)
})

test('the retention sweep removes events past retention once none of their deliveries is pending', async () => {
  const { h, rx } = await setup()
  rx.statuses.push(500)
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  await deliverEvents(h)
  h.clock.advance(8 * 24 * HOUR)
  // One delivered, one still pending (its first try failed, its retry not yet made).
  expect((await h.server.sweep()).events).toBe(1)
  expect((await h.server.webhooks.events({})).map((e) => e.status)).toEqual(['pending'])
  expect(Number((await h.sql('SELECT count(*) AS n FROM event_deliveries'))[0]!.n)).toBe(1)
})

test('the retry schedule: 30 s doubling, up to 10 % longer, at most 1 h apart, none past 24 h', async () => {
  const { nextTry } = await import('../../src/events/schedule.ts')
  expect([1, 2, 3, 4].map((n) => nextTry(n, 0, 0, 0))).toEqual([30_000, 60_000, 120_000, 240_000])
  expect(nextTry(1, 0, 0, 0.999)).toBe(32_997)
  expect(nextTry(7, 0, 0, 0)).toBe(1_920_000)
  expect(nextTry(8, 0, 0, 0)).toBe(HOUR)
  expect(nextTry(7, 0, 0, 0.999)).toBe(2_111_808)
  expect(nextTry(40, 0, 0, 0.5)).toBe(HOUR)
  expect(nextTry(20, 23 * HOUR, 0, 0)).toBe(24 * HOUR)
  expect(nextTry(20, 23 * HOUR + 1, 0, 0)).toBeNull()
})

test('an endpoint whose sealed secret was changed in the database is a failed try (retried), never a signature with a wrong key', async () => {
  const { h, rx } = await setup()
  await h.sql(ON_PG ? "UPDATE webhook_endpoints SET secret = decode(repeat('00', 40), 'hex')" : 'UPDATE webhook_endpoints SET secret = zeroblob(40)')
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  expect(await deliverEvents(h)).toBe(1)
  expect(rx.received).toHaveLength(0)
  const [e] = await h.server.webhooks.events({})
  expect([e!.status, e!.attempts, e!.lastError]).toEqual(['pending', 1, 'a sealed secret is not in a known format'])
})

test('sealed secrets: AES-256-GCM under a key from the server secret; a changed byte or another server secret does not open', async () => {
  const { SecretBox } = await import('../../src/lib/secret-box.ts')
  const { Hasher } = await import('../../src/lib/secrets.ts')
  const box = new SecretBox(new Hasher(Buffer.alloc(32, 1)), 'webhook-secrets')
  const sealed = box.seal('whsec_abc')
  expect(box.open(sealed)).toBe('whsec_abc')
  expect(Buffer.from(box.seal('whsec_abc')).equals(Buffer.from(sealed))).toBe(false)
  const changed = Buffer.from(sealed)
  changed[20]! ^= 1
  expect(() => box.open(changed)).toThrow('a sealed secret cannot be opened')
  const other = new SecretBox(new Hasher(Buffer.alloc(32, 2)), 'webhook-secrets')
  expect(() => other.open(sealed)).toThrow('a sealed secret cannot be opened')
})

test('the loop (as serve runs it) delivers on its own, and stop() waits for the try under way, then nothing more is sent', async () => {
  const { h, rx } = await setup()
  h.server.events.start()
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  await rx.arrival(1)
  let release!: () => void
  rx.hold = new Promise((r) => (release = r))
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  await rx.arrival(2)
  let stopped = false
  const stopping = h.server.events.stop().then(() => (stopped = true))
  await Bun.sleep(100)
  expect(stopped).toBe(false)
  release()
  await stopping
  expect((await h.server.webhooks.events({})).map((e) => e.status)).toEqual(['delivered', 'delivered'])
  rx.hold = null
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  // A fixed wait: longer than the loop's 1 s pass (events/dispatcher.ts, a real timer), to show no pass comes.
  await Bun.sleep(1_500)
  expect(rx.received).toHaveLength(2)
})
