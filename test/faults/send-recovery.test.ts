/**
 * A send's two transactions and recovery (otp/send.ts, otp/recovery.ts): the
 * verification is recorded `sending` with its debit before the provider is
 * called, then `accepted` or `failed` (refunded); a send left `sending` past
 * the delivery budget is refunded as `unknown`, once, and its code stays
 * verifiable until it expires. Killed processes: test/faults/*.test.ts.
 */
import { expect, test } from 'bun:test'
import { RECOVERY_MARGIN_MS } from '../../src/otp/recovery.ts'
import { harnessPerTest, type Harness } from '../kit/harness.ts'

const start = harnessPerTest()

const PHONE = '+14155550123'
const TIMEOUT_MS = 10_000

async function row(h: Harness, id: string) {
  return (await h.sql('SELECT status, delivery, delivery_provider FROM verifications WHERE id = $1', [id]))[0]
}

async function ledger(h: Harness): Promise<string[]> {
  return (await h.sql('SELECT kind FROM credit_ledger ORDER BY id')).map((r) => r.kind)
}

/** Polls until some verification is recorded `sending` (the send reached its delivery). */
async function untilSending(h: Harness): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const n = Number((await h.sql("SELECT count(*) AS n FROM verifications WHERE delivery = 'sending'"))[0]!.n)
    if (n > 0) return
    await Bun.sleep(10)
  }
  throw new Error('no send reached its delivery within 2 s')
}

/** Holds the next deliveries until the returned function is called. */
function hold(h: Harness): () => void {
  let release!: () => void
  h.delivery.gate = new Promise<void>((r) => (release = r))
  return () => {
    h.delivery.gate = null
    release()
  }
}

test('a send is recorded sending before the provider answers, and accepted with its provider after (written after the answer)', async () => {
  const h = await start({ credits: 1 })
  const release = hold(h)
  const pending = h.send({ channel: 'sms', recipient: PHONE, code: '4321' })
  await untilSending(h)
  const during = await h.sql('SELECT delivery FROM verifications')
  expect(during).toEqual([{ delivery: 'sending' }])
  expect(await h.server.admin.balance()).toMatchObject({ balance: 0 })
  release()
  const r = await pending
  expect(r.status).toBe(200)
  // The answer does not wait for the outcome's commit; it follows at once.
  await h.server.storage.settled()
  expect(await row(h, r.json.verification_id)).toEqual({ status: 'active', delivery: 'accepted', delivery_provider: 'recording' })
})

test('a failed delivery is recorded failed, out of use and refunded', async () => {
  const h = await start({ credits: 1 })
  h.delivery.fail = true
  const r = await h.send({ channel: 'sms', recipient: PHONE })
  expect(r.status).toBe(500)
  expect(await ledger(h)).toEqual(['grant', 'debit', 'refund'])
  const [v] = await h.sql('SELECT status, delivery FROM verifications')
  expect(v).toEqual({ status: 'failed', delivery: 'failed' })
})

test('recovery leaves a send alone within the delivery budget and its margin, then refunds it once as unknown; its code still verifies', async () => {
  const h = await start({ credits: 1, config: { delivery: { timeout_ms: TIMEOUT_MS } } })
  const release = hold(h)
  const pending = h.send({ channel: 'sms', recipient: PHONE, code: '5678' })
  await untilSending(h)
  h.clock.advance(TIMEOUT_MS + RECOVERY_MARGIN_MS - 1)
  expect(await h.server.recover()).toBe(0)
  h.clock.advance(1)
  // Two recoveries at once (two processes): one refund.
  const refunded = await Promise.all([h.server.recover(), h.server.recover()])
  expect(refunded.reduce((a, b) => a + b, 0)).toBe(1)
  expect(await ledger(h)).toEqual(['grant', 'debit', 'refund'])
  expect(h.logs.some((l) => l.includes('refunded sends whose delivery outcome was never recorded'))).toBe(true)
  // The provider answers at last: the send is in force (200), and the settled state stays.
  release()
  const r = await pending
  expect(r.status).toBe(200)
  expect(await row(h, r.json.verification_id)).toMatchObject({ status: 'active', delivery: 'unknown' })
  expect(await ledger(h)).toEqual(['grant', 'debit', 'refund'])
  const v = await h.verify({ verification_id: r.json.verification_id, code: '5678' })
  expect(v.json.message).toBe('Code verified successfully')
})

test('recovery after a restart: a send left sending by a stopped process is refunded', async () => {
  const first = await start({ credits: 3, config: { delivery: { timeout_ms: TIMEOUT_MS } } })
  const ok = await first.send({ channel: 'sms', recipient: PHONE })
  expect(ok.status).toBe(200)
  // The state a process killed during delivery leaves behind (once the outcome, written after the answer, has landed).
  await first.server.storage.settled()
  await first.sql("UPDATE verifications SET delivery = 'sending', delivery_provider = NULL WHERE id = $1", [ok.json.verification_id])
  const h = await first.restart()
  h.clock.advance(TIMEOUT_MS + RECOVERY_MARGIN_MS)
  expect(await h.server.recover()).toBe(1)
  expect(await h.server.recover()).toBe(0)
  expect(await h.server.admin.balance()).toMatchObject({ balance: 3 })
  expect(await row(h, ok.json.verification_id)).toMatchObject({ status: 'active', delivery: 'unknown' })
})

test('test recipients have no delivery state and are never recovered', async () => {
  const h = await start()
  const r = await h.send({ channel: 'sms', recipient: '+15550100001' })
  expect(r.status).toBe(200)
  expect(await row(h, r.json.verification_id)).toEqual({ status: 'active', delivery: null, delivery_provider: null })
  h.clock.advance(86_400_000)
  expect(await h.server.recover()).toBe(0)
})
