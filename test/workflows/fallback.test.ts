/**
 * A workflow's next step (docs/api.md#workflows), through the recording
 * delivery and the injected clock, on the engine of the run: at once when no
 * provider takes a step, when a receipt says undelivered, after
 * `channel_timeout`, or on `/next`; never once the code is verified; the
 * same code at every step; one credit per started step, refunded as its own
 * delivery says, which the ledger module checks.
 */
import { describe, expect, test } from 'bun:test'
import { ledgerViolations } from '../../scripts/kit/ledger.ts'
import { balance } from '../kit/fraud.ts'
import { expectError, harnessPerTest, type Harness, ChannelDelivery, TEST } from '../kit/harness.ts'
import { postReceipt, RECORDING_RECEIPTS } from '../kit/receipts.ts'
import { waitFor } from '../kit/wait-for.ts'

const start = harnessPerTest({ credits: 10 })
const PHONE = '+919812345678'
const TWO = { recipient: PHONE, workflow: [{ channel: 'whatsapp' }, { channel: 'sms' }] }
const status = async (h: Harness, id: string) => (await h.call(`/api/v1/verifications/${id}`, undefined, { method: 'GET', headers: {} })).json
const next = (h: Harness, id: string, headers: Record<string, string> = {}) => h.call(`/api/v1/verifications/${id}/next`, undefined, { headers })
const ledgerOf = (h: Harness) => ledgerViolations(h.databaseUrl ?? h.dbPath, {}, { now: h.clock.now() })
const eventTypes = async (h: Harness) => (await h.sql('SELECT type FROM events ORDER BY seq')).map((r) => r.type as string)

async function channelHarness(): Promise<{ h: Harness; delivery: ChannelDelivery }> {
  const delivery = new ChannelDelivery()
  return { h: await start({ delivery }), delivery }
}

describe('no provider takes a step: the next one at once', () => {
  test('WhatsApp refused: the send answers 200 after the SMS went out, with the same code; a credit each, the first refunded', async () => {
    const { h, delivery } = await channelHarness()
    delivery.failing.add('whatsapp')
    const r = await h.send(TWO)
    expect(r.status).toBe(200)
    await h.server.storage.settled()
    expect(delivery.sent.map((m) => [m.channel, m.recipient])).toEqual([['sms', PHONE]])
    expect(await balance(h)).toBe(9)
    const s = await status(h, r.json.verification_id)
    expect(s).toMatchObject({ channel: 'sms', status: 'pending', current_step: 1, delivery: { status: 'accepted', provider: 'recording' } })
    expect(s.steps.map((x: Record<string, unknown>) => [x.channel, x.delivery, x.ended_reason])).toEqual([
      ['whatsapp', 'failed', 'delivery_failed'],
      ['sms', 'accepted', null],
    ])
    expect((await h.sql("SELECT kind FROM credit_ledger WHERE kind <> 'grant' ORDER BY id")).map((x) => x.kind)).toEqual(['debit', 'refund', 'debit'])
    expect(await ledgerOf(h)).toEqual([])
    const fallback = (await h.sql("SELECT body FROM events WHERE type = 'verification.fallback'")).map((x) => JSON.parse(x.body as string).data)
    expect(fallback).toEqual([expect.objectContaining({ from: 'whatsapp', to: 'sms', reason: 'delivery_failed', step: 1, channel: 'sms' })])
    expect((await h.verify({ verification_id: r.json.verification_id, code: delivery.lastCode() })).json.verified).toBe(true)
    const metrics = await h.server.metrics.render()
    expect(metrics).toContain('otpd_workflow_fallbacks_total{from="whatsapp",to="sms",reason="delivery_failed"} 1\n')
    expect(metrics).toContain('otpd_workflow_steps_total{step="0",channel="whatsapp"} 1\n')
    expect(metrics).toContain('otpd_workflow_steps_total{step="1",channel="sms"} 1\n')
  })

  test('every step refused: 500, every credit refunded, the verification out of use as a plain failed send', async () => {
    const { h, delivery } = await channelHarness()
    delivery.failing.add('whatsapp').add('sms')
    const r = await h.send(TWO)
    expectError(r, 500, 'Failed to send verification')
    expect(await balance(h)).toBe(10)
    const [v] = await h.sql('SELECT id, status, delivery FROM verifications')
    expect([v!.status, v!.delivery]).toEqual(['failed', 'failed'])
    expect(await ledgerOf(h)).toEqual([])
    expect((await eventTypes(h)).filter((t) => t === 'verification.delivery_failed')).toHaveLength(1)
  })
})

describe('channel_timeout passes without a verified code', () => {
  test('the next step starts then and not before, with the same code; the first verifies still', async () => {
    const { h, delivery } = await channelHarness()
    const r = await h.send({ ...TWO, channel_timeout: 30 })
    await h.server.storage.settled()
    const code = delivery.lastCode()
    h.clock.advance(29_999)
    expect(await h.server.advanceDue()).toBe(0)
    h.clock.advance(1)
    expect(await h.server.advanceDue()).toBe(1)
    expect(await h.server.advanceDue()).toBe(0)
    expect(delivery.sent.map((m) => m.channel)).toEqual(['whatsapp', 'sms'])
    expect(delivery.lastCode()).toBe(code)
    expect(await balance(h)).toBe(8)
    const s = await status(h, r.json.verification_id)
    expect(s.steps.map((x: Record<string, unknown>) => [x.channel, x.delivery, x.ended_reason])).toEqual([
      ['whatsapp', 'accepted', 'timeout'],
      ['sms', 'accepted', null],
    ])
    expect(await ledgerOf(h)).toEqual([])
    expect((await h.verify({ verification_id: r.json.verification_id, code })).json.verified).toBe(true)
  })

  test('a verified code stops the workflow: nothing more is delivered or charged', async () => {
    const { h, delivery } = await channelHarness()
    const r = await h.send(TWO)
    expect((await h.verify({ verification_id: r.json.verification_id, code: delivery.lastCode() })).json.verified).toBe(true)
    h.clock.advance(120_000)
    expect(await h.server.advanceDue()).toBe(0)
    expect(delivery.sent).toHaveLength(1)
    expect(await balance(h)).toBe(9)
    const s = await status(h, r.json.verification_id)
    expect(s.steps[1]).toMatchObject({ started_at: null, due_at: null })
    expect(await h.sql('SELECT sealed FROM verification_steps WHERE sealed IS NOT NULL')).toEqual([])
  })

  test('a pending step survives a restart and starts after it', async () => {
    const { h, delivery } = await channelHarness()
    const r = await h.send(TWO)
    await h.server.storage.settled()
    const code = delivery.lastCode()
    const again = await h.restart()
    again.clock.advance(60_000)
    expect(await again.server.advanceDue()).toBe(1)
    // The same recording delivery before and after the restart.
    expect(again.delivery.sent.map((m) => [m.channel, m.code])).toEqual([
      ['whatsapp', code],
      ['sms', code],
    ])
    expect((await again.verify({ verification_id: r.json.verification_id, code })).json.verified).toBe(true)
    expect(await ledgerOf(again)).toEqual([])
  })

  test('a test recipient walks the workflow: nothing delivered or charged, 123456 verifies after it', async () => {
    const { h, delivery } = await channelHarness()
    const r = await h.send({ recipient: TEST.PHONE_SUCCESS, workflow: [{ channel: 'sms' }, { channel: 'voice' }] })
    h.clock.advance(60_000)
    expect(await h.server.advanceDue()).toBe(1)
    expect(delivery.sent).toHaveLength(0)
    expect(await balance(h)).toBe(10)
    const s = await status(h, r.json.verification_id)
    expect(s).toMatchObject({ channel: 'voice', current_step: 1, delivery: null })
    expect((await h.verify({ verification_id: r.json.verification_id, code: '123456' })).json.verified).toBe(true)
  })
})

describe('a receipt says undelivered', () => {
  test('the next step at once, through the signed receipt route', async () => {
    const delivery = new ChannelDelivery()
    const h = await start({ ...RECORDING_RECEIPTS, delivery })
    const r = await h.send(TWO)
    await h.server.storage.settled()
    expect((await postReceipt(h, r.json.verification_id, 'undelivered')).status).toBe(200)
    // After the receipt's answer.
    await waitFor(async () => (await status(h, r.json.verification_id)).steps[1].delivery === 'accepted', { what: 'the SMS step' })
    expect(delivery.sent.map((m) => m.channel)).toEqual(['whatsapp', 'sms'])
    const s = await status(h, r.json.verification_id)
    expect(s.steps.map((x: Record<string, unknown>) => [x.delivery, x.ended_reason])).toEqual([
      ['undelivered', 'undelivered'],
      ['accepted', null],
    ])
    // One provider for both channels: its next receipt cannot be told apart, and is the current step's.
    expect((await postReceipt(h, r.json.verification_id, 'delivered')).status).toBe(200)
    expect((await status(h, r.json.verification_id)).delivery.status).toBe('delivered')
    expect(await ledgerOf(h)).toEqual([])
  })
})

describe('POST /api/v1/verifications/{id}/next', () => {
  test('starts the next step; then 409 when none is left; the credit per step', async () => {
    const { h, delivery } = await channelHarness()
    const r = await h.send(TWO)
    await h.server.storage.settled()
    const n = await next(h, r.json.verification_id)
    expect(n.status).toBe(200)
    expect(n.json).toMatchObject({ success: true, verification_id: r.json.verification_id, current_step: 1, channel: 'sms' })
    expect(delivery.sent.map((m) => m.channel)).toEqual(['whatsapp', 'sms'])
    expectError(await next(h, r.json.verification_id), 409, 'Verification has no next step')
    expect(await balance(h)).toBe(8)
    expect((await status(h, r.json.verification_id)).steps[0].ended_reason).toBe('requested')
    expect(await ledgerOf(h)).toEqual([])
  })

  test('a plain send has no next step; an approved one is over; another key gets 404', async () => {
    const { h, delivery } = await channelHarness()
    const plain = await h.send({ channel: 'sms', recipient: '+14155550123' })
    expectError(await next(h, plain.json.verification_id), 409, 'Verification has no next step')
    const r = await h.send(TWO)
    expect((await h.verify({ verification_id: r.json.verification_id, code: delivery.lastCode() })).json.verified).toBe(true)
    expectError(await next(h, r.json.verification_id), 409, 'Verification is already approved')
    const other = await h.server.admin.createKey({ name: 'other' })
    expectError(await h.call(`/api/v1/verifications/${r.json.verification_id}/next`, undefined, { key: other.key, headers: {} }), 404, 'Verification not found')
  })

  test('with an Idempotency-Key a retry answers the same and delivers nothing again', async () => {
    const { h, delivery } = await channelHarness()
    const r = await h.send({ recipient: PHONE, workflow: [{ channel: 'whatsapp' }, { channel: 'sms' }, { channel: 'voice' }] })
    await h.server.storage.settled()
    const first = await next(h, r.json.verification_id, { 'idempotency-key': 'next-1' })
    const again = await next(h, r.json.verification_id, { 'idempotency-key': 'next-1' })
    expect(again.status).toBe(200)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.json.current_step).toBe(first.json.current_step)
    expect(delivery.sent.map((m) => m.channel)).toEqual(['whatsapp', 'sms'])
  })
})

describe('two nodes on one database', () => {
  test('both start the same due steps at once: each step starts once, one delivery and one credit each', async () => {
    const delivery = new ChannelDelivery()
    const a = await start({ delivery, credits: 100, config: { limits: { recipient_per_minute: 100, recipient_per_hour: 100 }, fraud: { mode: 'off' } } })
    const b = await start({ credits: undefined, dir: a.dir, ownsDir: false, key: a.key, databaseUrl: a.databaseUrl, clock: a.clock, delivery })
    const ids: string[] = []
    for (let i = 0; i < 10; i++) {
      const r = await a.send({ recipient: `+9198123400${String(i).padStart(2, '0')}`, workflow: [{ channel: 'whatsapp' }, { channel: 'sms' }] })
      expect(r.status).toBe(200)
      ids.push(r.json.verification_id)
    }
    await a.server.storage.settled()
    a.clock.advance(60_000)
    const [x, y] = await Promise.all([a.server.advanceDue(), b.server.advanceDue()])
    expect(x + y).toBe(10)
    expect(delivery.sent.filter((m) => m.channel === 'sms')).toHaveLength(10)
    expect(await balance(a)).toBe(80)
    expect(await ledgerOf(a)).toEqual([])
  })
})

describe('the fraud guard decides each step', () => {
  test('a step its channel may not reach is skipped with its reason, and the next one starts', async () => {
    const delivery = new ChannelDelivery()
    const g = await start({ delivery, config: { fraud: { allowed_countries: ['US'], whatsapp_allowed_countries: ['IN'] } } })
    const r = await g.send({ recipient: PHONE, workflow: [{ channel: 'whatsapp' }, { channel: 'sms' }, { channel: 'email', recipient: 'ann@example.com' }] })
    expect(r.status).toBe(200)
    await g.server.storage.settled()
    const n = await next(g, r.json.verification_id)
    expect(n.json).toMatchObject({ current_step: 2, channel: 'email' })
    expect(delivery.sent.map((m) => m.channel)).toEqual(['whatsapp', 'email'])
    const s = await status(g, r.json.verification_id)
    expect(s.steps.map((x: Record<string, unknown>) => [x.channel, x.started_at === null, x.ended_reason])).toEqual([
      ['whatsapp', false, 'requested'],
      ['sms', true, 'fraud_blocked'],
      ['email', false, null],
    ])
    const fallback = (await g.sql("SELECT body FROM events WHERE type = 'verification.fallback'")).map((x) => JSON.parse(x.body as string).data)
    expect(fallback).toEqual([expect.objectContaining({ from: 'whatsapp', to: 'email', reason: 'fraud_blocked', step: 2 })])
    expect(await balance(g)).toBe(8)
    expect(await ledgerOf(g)).toEqual([])
  })
})

describe('recovery', () => {
  test("a later step's delivery under way is not taken for a stopped send: its own start counts, not the verification's", async () => {
    const { h, delivery } = await channelHarness()
    const r = await h.send(TWO)
    await h.server.storage.settled()
    h.clock.advance(60_000)
    let release!: () => void
    delivery.gate = new Promise<void>((done) => (release = done))
    const advancing = h.server.advanceDue()
    await waitFor(async () => (await status(h, r.json.verification_id)).current_step === 1, { what: 'the SMS step to start' })
    h.clock.advance(1_000)
    // Created 61 s ago, past the delivery budget and its margin; its step started 1 s ago.
    expect(await h.server.recover()).toBe(0)
    release()
    expect(await advancing).toBe(1)
    expect((await status(h, r.json.verification_id)).delivery.status).toBe('accepted')
    expect(await ledgerOf(h)).toEqual([])
  })
})
