/**
 * RollupStore and StatsReads contract (otp/ports/stats.ts): the cursor's
 * compare-and-set, the sources in order, gaps, the recount, rollup rows and
 * refusals, and the bounded searches, the same on every engine.
 */
import { describe, expect, test } from 'bun:test'
import { SPAN } from '../../../src/otp/ports/stats.ts'
import type { RollupRow } from '../../../src/otp/ports/index.ts'
import type { Verification } from '../../../src/otp/types.ts'
import { defaultKey, hash, insertVerification, MINUTE, T0, useEngine } from './data.ts'

const engine = useEngine()
const storage = () => engine().storage
const HOUR = 60 * MINUTE

function row(o: Partial<RollupRow> = {}): RollupRow {
  return {
    span: SPAN.hour,
    at: T0,
    accountId: 1,
    channel: 'sms',
    country: 'US',
    provider: 'p',
    sends: 1,
    accepted: 1,
    delivered: 0,
    undelivered: 0,
    failed: 0,
    refunded: 0,
    approved: 0,
    monitored: 0,
    checked: 0,
    ...o,
  }
}

describe('cursor', () => {
  test('created once, then moved only from the value it has', async () => {
    expect(await storage().read((r) => r.rollups.cursor())).toBeNull()
    expect(await storage().write((r) => r.rollups.moveCursor(null, 'a'))).toBe(true)
    expect(await storage().write((r) => r.rollups.moveCursor(null, 'b'))).toBe(false)
    expect(await storage().write((r) => r.rollups.moveCursor('x', 'b'))).toBe(false)
    expect(await storage().write((r) => r.rollups.moveCursor('a', 'b'))).toBe(true)
    expect(await storage().read((r) => r.rollups.cursor())).toBe('b')
  })
})

describe('sources', () => {
  test('rows after a number, in order, at most a limit; rows at numbers; the last number', async () => {
    const key = await defaultKey(storage())
    const a = await insertVerification(storage(), key, { createdAt: T0 + 1 })
    const b = await insertVerification(storage(), key, { createdAt: T0 + 2 })
    const c = await insertVerification(storage(), key, { createdAt: T0 + 3 })
    const rows = await storage().read((r) => r.rollups.sourceRows('verifications', a.seq, 1))
    expect(rows).toEqual([{ seq: b.seq, accountId: 1, verificationId: b.id, verificationSeq: b.seq, at: T0 + 2, kind: 'verification', body: null }])
    // A SQLite event carries its verification's row number (the rollup then reads no id); PostgreSQL's events do not keep it.
    await storage().write((r) => r.events.add({ type: 'verification.sent', accountId: 1, at: T0 + 4, verification: c, status: 'pending', extra: {} }))
    const [sent] = await storage().read((r) => r.rollups.sourceRows('events', 0, 10))
    expect(sent).toMatchObject({ verificationId: c.id, verificationSeq: engine().name === 'sqlite' ? c.seq : null, kind: 'verification.sent' })
    const at = await storage().read((r) => r.rollups.sourceRowsAt('verifications', [c.seq, a.seq, 999_999]))
    expect(at.map((x) => x.seq).sort((x, y) => x - y)).toEqual([a.seq, c.seq])
    expect(await storage().read((r) => r.rollups.sourceEnd('verifications'))).toBe(c.seq)
    expect(await storage().read((r) => r.rollups.sourceEnd('events'))).toBe(sent!.seq)
    const created = await storage().read((r) => r.rollups.createdAt([b.seq, 999_999]))
    expect([...created]).toEqual([[b.seq, { id: b.id, createdAt: T0 + 2 }]])
    // The ledger: the debit of a send, then its refund.
    await storage().write((r) => r.credits.post({ accountId: 1, kind: 'refund', amount: 1, verificationId: b.id, at: T0 + 5 }))
    const ledger = await storage().read((r) => r.rollups.sourceRows('ledger', 0, 10))
    expect(ledger.at(-1)).toMatchObject({ accountId: 1, verificationId: b.id, at: T0 + 5, kind: 'refund' })
  })

  test('gaps are kept per source until dropped', async () => {
    await storage().write(async (r) => {
      await r.rollups.addGaps('events', [5, 7], T0)
      await r.rollups.addGaps('events', [7], T0 + 1)
      await r.rollups.addGaps('ledger', [5], T0)
    })
    expect(await storage().read((r) => r.rollups.gaps('events'))).toEqual([
      { seq: 5, seenAt: T0 },
      { seq: 7, seenAt: T0 },
    ])
    await storage().write((r) => r.rollups.dropGaps('events', [5]))
    expect(await storage().read((r) => r.rollups.gaps('events'))).toEqual([{ seq: 7, seenAt: T0 }])
    expect(await storage().read((r) => r.rollups.gaps('ledger'))).toEqual([{ seq: 5, seenAt: T0 }])
  })
})

describe('recount', () => {
  test('real sends of [from, to) per bucket, account, channel, country and provider, with where they stand', async () => {
    const key = await defaultKey(storage())
    const base = { createdAt: T0 + MINUTE + 5, country: 'GB', delivery: 'accepted' as const, deliveryProvider: 'p' }
    await insertVerification(storage(), key, { ...base, usedAt: T0 + 2 * MINUTE })
    await insertVerification(storage(), key, { ...base, delivery: 'delivered', fraudMonitored: 'new_country' })
    await insertVerification(storage(), key, { ...base, delivery: 'undelivered' })
    const failed = await insertVerification(storage(), key, { ...base, delivery: 'failed', deliveryProvider: null, status: 'failed' })
    await storage().write((r) => r.credits.post({ accountId: 1, kind: 'refund', amount: 1, verificationId: failed.id, at: T0 }))
    // Left out: a test recipient, and sends outside the range.
    await insertVerification(storage(), key, { ...base, testMode: 'success' })
    await insertVerification(storage(), key, { ...base, createdAt: T0 - 1 })
    await insertVerification(storage(), key, { ...base, createdAt: T0 + HOUR })
    const rows = await storage().read((r) => r.rollups.recount(T0, T0 + HOUR, SPAN.minute))
    rows.sort((a, b) => a.provider.localeCompare(b.provider))
    expect(rows).toEqual([
      row({ span: SPAN.minute, at: T0 + MINUTE, country: 'GB', provider: '', sends: 1, accepted: 0, failed: 1, refunded: 1 }),
      row({ span: SPAN.minute, at: T0 + MINUTE, country: 'GB', sends: 3, accepted: 3, delivered: 1, undelivered: 1, approved: 1, monitored: 1 }),
    ])
  })
})

describe('rollup rows and refusals', () => {
  test('saved (replacing counts), read by span, range and account, deleted, dropped by age', async () => {
    await storage().write((r) => r.rollups.saveRows([row(), row({ accountId: 2, sends: 4 }), row({ at: T0 + HOUR })], []))
    await storage().write((r) => r.rollups.saveRows([row({ sends: 9 })], [row({ at: T0 + HOUR })]))
    const all = await storage().read((r) => r.stats.rollups(SPAN.hour, T0, T0 + 2 * HOUR, null))
    expect(all.map((x) => [x.accountId, x.at, x.sends]).sort()).toEqual([
      [1, T0, 9],
      [2, T0, 4],
    ])
    expect((await storage().read((r) => r.stats.rollups(SPAN.hour, T0, T0 + HOUR, 2))).map((x) => x.sends)).toEqual([4])
    expect(await storage().read((r) => r.stats.rollups(SPAN.minute, T0, T0 + HOUR, null))).toEqual([])
    await storage().write((r) => r.rollups.dropRows(SPAN.hour, T0 + 1))
    expect(await storage().read((r) => r.stats.rollups(SPAN.hour, 0, T0 + 2 * HOUR, null))).toEqual([])
  })

  test('refusals add up per minute, account, rule and country', async () => {
    const x = { minute: T0, accountId: 1, rule: 'geo', country: 'UZ', refusals: 1 }
    await storage().write((r) => r.rollups.addRefusals([x, x, { ...x, rule: 'ip' }]))
    await storage().write((r) => r.rollups.addRefusals([x]))
    const rows = await storage().read((r) => r.stats.refusals(T0, T0 + MINUTE, null))
    expect(rows.sort((a, b) => a.rule.localeCompare(b.rule))).toEqual([
      { ...x, refusals: 3 },
      { ...x, rule: 'ip', refusals: 1 },
    ])
    expect(await storage().read((r) => r.stats.refusals(T0, T0 + MINUTE, 2))).toEqual([])
    await storage().write((r) => r.rollups.dropRefusals(T0 + 1))
    expect(await storage().read((r) => r.stats.refusals(0, T0 + MINUTE, null))).toEqual([])
  })
})

describe('search', () => {
  test('newest first; a page stops at its budget and says where to go on; filters; by recipient', async () => {
    const key = await defaultKey(storage())
    const made: Verification[] = []
    for (let i = 0; i < 6; i++) {
      made.push(await insertVerification(storage(), key, { createdAt: T0 + i, country: i % 3 === 0 ? 'DE' : 'US', recipientHash: hash(i < 2 ? 'a' : 'b') }))
    }
    const q = { from: T0, to: T0 + HOUR, accountId: null, country: null, status: null, now: T0, before: null, limit: 10, budget: 100 }
    const all = await storage().read((r) => r.stats.search(q))
    expect(all.rows.map((v) => v.seq)).toEqual(made.map((v) => v.seq).reverse())
    expect(all.next).toBeNull()
    // DE: rows 3 and 0. A budget of 2 looks at rows 5 and 4 only: none found, go on after row 4.
    const first = await storage().read((r) => r.stats.search({ ...q, country: 'DE', budget: 2 }))
    expect(first.rows).toEqual([])
    expect(first.next).toEqual({ at: T0 + 4, seq: made[4]!.seq })
    const second = await storage().read((r) => r.stats.search({ ...q, country: 'DE', budget: 2, before: first.next }))
    expect(second.rows.map((v) => v.seq)).toEqual([made[3]!.seq])
    // A full page: the next one starts after its last row.
    const page = await storage().read((r) => r.stats.search({ ...q, limit: 2 }))
    expect(page.next).toEqual({ at: T0 + 4, seq: made[4]!.seq })
    // They all expire at T0 + 10 min.
    const status = async (status: 'pending' | 'expired', now: number) => (await storage().read((r) => r.stats.search({ ...q, status, now }))).rows.length
    expect([await status('pending', T0 + 10 * MINUTE - 1), await status('expired', T0 + 10 * MINUTE - 1)]).toEqual([6, 0])
    expect([await status('pending', T0 + 10 * MINUTE), await status('expired', T0 + 10 * MINUTE)]).toEqual([0, 6])
    expect((await storage().read((r) => r.stats.search({ ...q, accountId: 2 }))).rows).toEqual([])
    const mine = await storage().read((r) => r.stats.byRecipient(hash('a'), T0, T0 + HOUR, null, 10))
    expect(mine.map((v) => v.seq)).toEqual([made[1]!.seq, made[0]!.seq])
    const after = await storage().read((r) => r.stats.byRecipient(hash('a'), T0, T0 + HOUR, { at: T0 + 1, seq: made[1]!.seq }, 10))
    expect(after.map((v) => v.seq)).toEqual([made[0]!.seq])
  })
})
