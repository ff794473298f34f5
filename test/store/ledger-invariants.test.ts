/**
 * The ledger checks (scripts/kit/ledger.ts) that the fault tests and the
 * crash scripts rely on, on the engine of the run: silent on the ledger the
 * domain writes, and each kind of damage named. The refund rule is the one
 * the module states: the refund follows the delivery (`failed` and `unknown`
 * are refunded, a receipt after `unknown` keeps the refund), never the status.
 */
import { expect, test } from 'bun:test'
import { emptyAcknowledged, inForceUnacknowledged, ledgerRows, ledgerViolations, sends } from '../kit/processes.ts'
import { createHarness, type Harness, SHIFT_BALANCE_SQL, TEST } from '../kit/harness.ts'
import { closeAfterTest } from '../kit/cleanup.ts'

/** Three sends: one accepted, one that no provider took (refunded), one to a test recipient (not charged). */
async function sound(): Promise<{ h: Harness; target: string; ok: string; failed: string; test: string }> {
  const h = closeAfterTest(await createHarness({ credits: 10 }))
  const ok = (await h.send({ channel: 'sms', recipient: '+14155550001' })).json.verification_id as string
  h.delivery.fail = true
  const failed = await h.send({ channel: 'sms', recipient: '+14155550002' })
  expect(failed.status).toBe(500)
  h.delivery.fail = false
  const test = (await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).json.verification_id as string
  const failedId = (await h.sql("SELECT id FROM verifications WHERE delivery = 'failed'"))[0]!.id as string
  return { h, target: h.databaseUrl ?? h.dbPath, ok, failed: failedId, test }
}

test('the ledger the domain writes: no violation, and each row as it is', async () => {
  const s = await sound()
  const ack = { ...emptyAcknowledged(), sends: new Map([[s.ok, 0]]), granted: 10 }
  expect(await ledgerViolations(s.target, ack, { allSettled: true, now: s.h.clock.now() })).toEqual([])
  const rows = await ledgerRows(s.target)
  expect(rows.map((r) => [r.id, r.charged, r.status, r.delivery, r.debits, r.refunds])).toEqual([
    [s.ok, true, 'active', 'accepted', 1, 0],
    [s.failed, true, 'failed', 'failed', 1, 1],
    [s.test, false, 'active', null, 0, 0],
  ])
  expect(await inForceUnacknowledged(s.target, [])).toEqual([rows[0]!])
})

test('`unknown` must be refunded; a receipt after it keeps the refund', async () => {
  const s = await sound()
  await s.h.sql("UPDATE verifications SET delivery = 'unknown' WHERE id = $1", [s.ok])
  expect(await ledgerViolations(s.target)).toEqual([`verification ${s.ok} (charged true, delivery unknown, status active): 1 debits, 0 refunds`])
  // Recovery's refund, as it writes it.
  await s.h.sql("INSERT INTO credit_ledger (account_id, kind, amount, verification_id, created_at) VALUES (1, 'refund', 1, $1, 0)", [s.ok])
  await s.h.sql(SHIFT_BALANCE_SQL, [1, 1])
  expect(await ledgerViolations(s.target, sends([s.ok]))).toEqual([])
  await s.h.sql("UPDATE verifications SET delivery = 'delivered' WHERE id = $1", [s.ok])
  expect(await ledgerViolations(s.target, sends([s.ok]))).toEqual([])
  // `accepted` (a provider took it) is never refunded.
  await s.h.sql("UPDATE verifications SET delivery = 'accepted' WHERE id = $1", [s.ok])
  expect(await ledgerViolations(s.target)).toEqual([`verification ${s.ok} (charged true, delivery accepted, status active): 1 debits, 1 refunds`])
})

test('a failed status with a delivery that did not fail is named, and is no refund by itself', async () => {
  const s = await sound()
  await s.h.sql("UPDATE verifications SET status = 'failed' WHERE id = $1", [s.ok])
  expect(await ledgerViolations(s.target)).toEqual([
    `verification ${s.ok} (charged true, delivery accepted, status failed): 1 debits, 0 refunds: failed, but its delivery is not`,
  ])
  // A canceled verification whose delivery failed is refunded all the same.
  await s.h.sql("UPDATE verifications SET status = 'active' WHERE id = $1", [s.ok])
  await s.h.sql("UPDATE verifications SET status = 'canceled' WHERE id = $1", [s.failed])
  expect(await ledgerViolations(s.target)).toEqual([])
})

test('the balances, orphans, test recipients and a debit too many are named', async () => {
  const s = await sound()
  await s.h.sql(SHIFT_BALANCE_SQL, [1, 1])
  expect(await ledgerViolations(s.target)).toEqual(['account default: grants 10 - debits 2 + refunds 1 != balance 10'])
  await s.h.sql(SHIFT_BALANCE_SQL, [1, -1])
  await s.h.sql("INSERT INTO credit_ledger (account_id, kind, amount, verification_id, created_at) VALUES (1, 'debit', 1, $1, 0)", [s.test])
  await s.h.sql("INSERT INTO credit_ledger (account_id, kind, amount, verification_id, created_at) VALUES (1, 'debit', 1, $1, 0)", [s.ok])
  await s.h.sql("INSERT INTO credit_ledger (account_id, kind, amount, verification_id, created_at) VALUES (1, 'refund', 1, 'no-such-id', 0)")
  await s.h.sql(SHIFT_BALANCE_SQL, [1, -1])
  expect(await ledgerViolations(s.target)).toEqual([
    '1 debits/refunds without their verification',
    `verification ${s.ok} (charged true, delivery accepted, status active): 2 debits, 0 refunds`,
    `verification ${s.test} (charged false, delivery null, status active): 1 debits, 0 refunds`,
  ])
})

test('what clients were told is checked: a send, a verify, a grant', async () => {
  const s = await sound()
  const ghost = crypto.randomUUID()
  expect(await ledgerViolations(s.target, sends([s.ok, ghost, s.failed]))).toEqual([
    `acknowledged send ${ghost}: not in the database`,
    `acknowledged send ${s.failed}: charged true, status failed, delivery failed, 1 debits, 1 refunds`,
  ])
  expect(await ledgerViolations(s.target, { verified: new Set([s.ok]), granted: 11 })).toEqual([
    'acknowledged grants 11 > grants in the ledger 10',
    `acknowledged verify ${s.ok}: not used`,
  ])
})

test('a send still `sending`: fine in flight, named after a clean stop or once recovery has had its time', async () => {
  const s = await sound()
  await s.h.sql("UPDATE verifications SET delivery = 'sending' WHERE id = $1", [s.ok])
  const now = s.h.clock.now()
  expect(await ledgerViolations(s.target, sends([s.ok]), { now })).toEqual([])
  expect(await ledgerViolations(s.target, {}, { now, settledAfterMs: 1_000 })).toEqual([])
  const what = `verification ${s.ok} (charged true, delivery sending, status active): 1 debits, 0 refunds`
  expect(await ledgerViolations(s.target, {}, { now: now + 5_000, settledAfterMs: 1_000 })).toEqual([
    `${what}: still sending 5000 ms after it was created (recovery did not settle it)`,
  ])
  expect(await ledgerViolations(s.target, {}, { now, allSettled: true })).toEqual([`${what}: still sending after a clean stop`])
})
