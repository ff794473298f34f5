/**
 * How PostgreSQL shares `writeShared`'s transactions (store/pg/storage.ts):
 * the writes queued together commit in one transaction, at most MAX_SHARED
 * in one, and a transaction that fails before COMMIT leaves each to run again
 * alone. A send's outcome goes this way. What every engine promises:
 * test/store/contract/shared-writes.test.ts; a lost COMMIT answer:
 * test/pg/commit-outcome.test.ts.
 */
import { describe, expect, test } from 'bun:test'
import type { Repos } from '../../src/otp/ports/index.ts'
import { MAX_SHARED, type PgStorage } from '../../src/store/pg/storage.ts'
import { harnessPerTest, ON_PG } from '../kit/harness.ts'
import { T0, useEngine } from '../store/contract/data.ts'

const makeAccount = (name: string) => async (r: Repos) => (await r.admin.insertAccount(name, T0)).name

describe.skipIf(!ON_PG)('shared writes on PostgreSQL', () => {
  const engine = useEngine()
  const storage = () => engine().storage as PgStorage
  /** How many transactions wrote the accounts named shared-*, and how many accounts. */
  const landed = async () =>
    (await engine().sql("SELECT count(*)::int AS n, count(DISTINCT xmin::text)::int AS transactions FROM accounts WHERE name LIKE 'shared-%'"))[0] as {
      n: number
      transactions: number
    }

  test('the writes made in one turn commit in one transaction', async () => {
    let commits = 0
    storage().beforeCommit = async () => void commits++
    const all = Array.from({ length: 20 }, (_, i) => `shared-${i}`)
    expect(await Promise.all(all.map((n) => storage().writeShared(makeAccount(n))))).toEqual(all)
    expect(commits).toBe(1)
    expect(await landed()).toEqual({ n: 20, transactions: 1 })
  })

  test(`at most ${MAX_SHARED} share a transaction`, async () => {
    const n = 2 * MAX_SHARED + 22
    await Promise.all(Array.from({ length: n }, (_, i) => storage().writeShared(makeAccount(`shared-${i}`))))
    expect(await landed()).toEqual({ n, transactions: 3 })
  })

  test('the backend terminated before the shared COMMIT: each runs again in a transaction of its own, and lands once', async () => {
    let killed = 0
    storage().beforeCommit = async (at) => {
      if (killed++ > 0) return
      await engine().sql('SELECT pg_terminate_backend($1)', [at.pid])
    }
    const all = Array.from({ length: 8 }, (_, i) => `shared-${i}`)
    expect(await Promise.all(all.map((n) => storage().writeShared(makeAccount(n))))).toEqual(all)
    expect(killed).toBe(1 + all.length)
    expect(await landed()).toEqual({ n: 8, transactions: 8 })
  })
})

describe.skipIf(!ON_PG)("a send's outcome on PostgreSQL", () => {
  const harness = harnessPerTest()

  test('goes by writeShared: concurrent sends each end accepted, with one verification.sent', async () => {
    const h = await harness({ credits: 50 })
    const storage = h.server.storage as PgStorage
    const shared = storage.writeShared.bind(storage)
    let calls = 0
    storage.writeShared = (fn) => {
      calls++
      return shared(fn)
    }
    const sends = await Promise.all(Array.from({ length: 12 }, (_, i) => h.send({ channel: 'sms', recipient: `+1415555${String(1000 + i)}` })))
    expect(sends.map((s) => s.status)).toEqual(Array(12).fill(200))
    await storage.settled()
    expect(calls).toBe(12)
    const rows = await h.sql(
      "SELECT v.delivery, (SELECT count(*)::int FROM events e WHERE e.verification_id = v.id AND e.type = 'verification.sent' AND e.sequence = 1) AS sent FROM verifications v",
    )
    expect(rows.map((r) => [r.delivery, r.sent])).toEqual(Array(12).fill(['accepted', 1]))
  })
})
