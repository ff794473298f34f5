/**
 * The console's workflow figures (docs/console.md#workflows), on the engine
 * of the run: the store's one aggregate over the verifications and their
 * steps, and `/console/api/workflows` built on it. Which step converted, by
 * country and by channel; the share of approvals a later step saved; test
 * recipients, plain sends, other accounts and other periods left out.
 */
import { describe, expect, test } from 'bun:test'
import { workflowStepRows } from '../../src/store/sql/console-reads.ts'
import { consoleOf } from '../kit/console.ts'
import { harnessPerTest, type Harness, HOUR, ChannelDelivery, TEST } from '../kit/harness.ts'

const start = harnessPerTest({ credits: 100, config: { fraud: { mode: 'off' }, limits: { recipient_per_minute: 100, recipient_per_hour: 100 } } })
const IN = (i: number) => `+91981234${String(5000 + i)}`
const GB = (i: number) => `+44740012${String(1000 + i)}`
const WS = [{ channel: 'whatsapp' }, { channel: 'sms' }, { channel: 'voice' }]

/** Sends a workflow to `recipient`; the code its steps share. */
async function sendWorkflow(h: Harness, delivery: ChannelDelivery, recipient: string, workflow: unknown[] = WS): Promise<{ id: string; code: string }> {
  const r = await h.send({ recipient, workflow })
  expect(r.status).toBe(200)
  await h.server.storage.settled()
  return { id: r.json.verification_id, code: delivery.sent.at(-1)!.code }
}

const approve = async (h: Harness, v: { id: string; code: string }) =>
  expect((await h.verify({ verification_id: v.id, code: v.code })).json.verified).toBe(true)

/**
 * India: 4 workflow sends, approved at steps 0, 1 (WhatsApp refused) and 2
 * (after two timeouts), one never approved; Britain: 1 approved at step 0;
 * one that starts with an email (no country stored), approved at step 1
 * after /next; and what is left out: a plain send, a test recipient's
 * workflow, another account's.
 */
async function seed(): Promise<{ h: Harness; delivery: ChannelDelivery }> {
  const delivery = new ChannelDelivery()
  const h = await start({ delivery })
  await approve(h, await sendWorkflow(h, delivery, IN(0)))
  delivery.failing.add('whatsapp')
  await approve(h, await sendWorkflow(h, delivery, IN(1)))
  delivery.failing.delete('whatsapp')
  const late = await sendWorkflow(h, delivery, IN(2))
  await sendWorkflow(h, delivery, IN(3))
  h.clock.advance(60_000)
  expect(await h.server.advanceDue()).toBe(2)
  h.clock.advance(60_000)
  expect(await h.server.advanceDue()).toBe(2)
  await h.server.storage.settled()
  await approve(h, late)
  await approve(h, await sendWorkflow(h, delivery, GB(0), [{ channel: 'sms' }, { channel: 'voice' }]))
  const mail = await sendWorkflow(h, delivery, GB(1), [{ channel: 'email', recipient: 'ann@example.com' }, { channel: 'sms' }])
  expect((await h.call(`/api/v1/verifications/${mail.id}/next`, undefined, { headers: {} })).status).toBe(200)
  await approve(h, mail)
  // Left out: a plain send, a test recipient's workflow, another account's workflow.
  const plain = await h.send({ channel: 'sms', recipient: IN(9) })
  await approve(h, { id: plain.json.verification_id, code: delivery.sent.at(-1)!.code })
  await approve(h, { id: (await h.send({ recipient: TEST.PHONE_SUCCESS, workflow: WS })).json.verification_id, code: '123456' })
  await h.server.admin.createAccount('other')
  await h.server.admin.addCredits(10, 'other')
  const other = await h.server.admin.createKey({ name: 'other', account: 'other' })
  expect((await h.send({ recipient: IN(8), workflow: WS }, other.key)).status).toBe(200)
  await h.server.storage.settled()
  return { h, delivery }
}

describe('the store: one aggregate per country, step and channel', () => {
  test('started steps and the approvals at the step current then', async () => {
    const { h } = await seed()
    const now = h.clock.now()
    const rows = await h.server.storage.read((r) => r.stats.workflowSteps(now - HOUR, now + 1, 1))
    const sorted = rows.map((x) => [x.country, x.step, x.channel, x.started, x.approved]).sort((a, b) => String(a).localeCompare(String(b)))
    expect(sorted).toEqual([
      ['', 0, 'email', 1, 0],
      ['', 1, 'sms', 1, 1],
      ['GB', 0, 'sms', 1, 1],
      ['IN', 0, 'whatsapp', 4, 1],
      ['IN', 1, 'sms', 3, 1],
      ['IN', 2, 'voice', 2, 1],
    ])
    // Every account: the other account's workflow too; a period that ends before the sends: nothing.
    const all = await h.server.storage.read((r) => r.stats.workflowSteps(now - HOUR, now + 1, null))
    expect(all.find((x) => x.country === 'IN' && x.step === 0)!.started).toBe(5)
    expect(await h.server.storage.read((r) => r.stats.workflowSteps(now - 2 * HOUR, now - HOUR, null))).toEqual([])
  })
})

describe("the statement's groups as steps", () => {
  test('a skipped step (never started) counts nothing; the approvals go to the last step started', () => {
    const groups = [
      // Step 2 skipped (fraud guard, credits): the third started and took the approval.
      { country: 'IN', c0: 'whatsapp', c1: null, c2: 'voice', last: 2, sends: '3', approved: '2' },
      { country: 'IN', c0: 'whatsapp', c1: 'sms', c2: null, last: 1, sends: 4, approved: 1 },
    ]
    expect(workflowStepRows(groups)).toEqual([
      { country: 'IN', step: 0, channel: 'whatsapp', started: 7, approved: 0 },
      { country: 'IN', step: 2, channel: 'voice', started: 3, approved: 2 },
      { country: 'IN', step: 1, channel: 'sms', started: 4, approved: 1 },
    ])
  })
})

describe('the period', () => {
  test('whole minutes of a 1 h period, and a send made by a node whose clock is 50 s behind the one before it', async () => {
    const delivery = new ChannelDelivery()
    const h = await start({ delivery })
    const t0 = h.clock.now() // 12:00:00
    const started = async (at: number) => {
      h.clock.set(at)
      return (await consoleOf(h).get('/console/api/workflows?period=1h')).json.totals.started
    }
    expect((await h.send({ channel: 'sms', recipient: GB(0) })).status).toBe(200)
    h.clock.set(t0 + 2 * 60_000)
    await sendWorkflow(h, delivery, IN(0))
    h.clock.set(t0 + 3 * 60_000)
    await sendWorkflow(h, delivery, IN(1))
    // A node 50 s behind numbers its send after the one above, with an earlier time.
    h.clock.set(t0 + 3 * 60_000 - 50_000)
    await sendWorkflow(h, delivery, IN(2))
    // At 13:01 the period starts at 12:02: all three; at 13:02, at 12:03: the one sent then only; at 13:03: none.
    expect(await started(t0 + 61 * 60_000 + 30_000)).toBe(3)
    expect(await started(t0 + 62 * 60_000)).toBe(1)
    expect(await started(t0 + 63 * 60_000 - 1)).toBe(1)
    expect(await started(t0 + 63 * 60_000)).toBe(0)
  })
})

describe('/console/api/workflows', () => {
  test('which step converted, by country and channel, and the share fallback saved', async () => {
    const { h } = await seed()
    const r = await consoleOf(h).get('/console/api/workflows?period=24h&account=default')
    expect(r.status).toBe(200)
    expect(r.json).toMatchObject({ account: 'default', period: '24h', from: '2025-12-31T13:00:00.000Z', to: '2026-01-01T13:00:00.000Z' })
    // 6 sends, 5 approved: 2 at the first step, 3 at a later one.
    expect(r.json.totals).toEqual({ started: 6, approved: 5, approved_by_step: [2, 2, 1], fallback_saved: 3 / 5 })
    expect(r.json.by_country).toEqual([
      { country: 'IN', started: 4, approved: 3, approved_by_step: [1, 1, 1], fallback_saved: 2 / 3 },
      { country: null, started: 1, approved: 1, approved_by_step: [0, 1, 0], fallback_saved: 1 },
      { country: 'GB', started: 1, approved: 1, approved_by_step: [1, 0, 0], fallback_saved: 0 },
    ])
    expect(r.json.by_channel).toEqual([
      { channel: 'sms', steps_started: 5, approved: 3, approved_by_step: [1, 2, 0] },
      { channel: 'whatsapp', steps_started: 4, approved: 1, approved_by_step: [1, 0, 0] },
      { channel: 'voice', steps_started: 2, approved: 1, approved_by_step: [0, 0, 1] },
      { channel: 'email', steps_started: 1, approved: 0, approved_by_step: [0, 0, 0] },
    ])
  })

  test('a period without workflow sends: zeros and no share; an unknown account is a 404', async () => {
    const { h } = await seed()
    h.clock.advance(2 * HOUR)
    const r = await consoleOf(h).get('/console/api/workflows?period=1h')
    expect(r.json.totals).toEqual({ started: 0, approved: 0, approved_by_step: [0, 0, 0], fallback_saved: null })
    expect([r.json.by_country, r.json.by_channel]).toEqual([[], []])
    expect((await consoleOf(h).get('/console/api/workflows?account=nobody')).status).toBe(404)
    expect((await consoleOf(h).get('/console/api/workflows?period=2h')).status).toBe(400)
  })
})
