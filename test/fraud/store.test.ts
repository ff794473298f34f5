/**
 * The fraud store's rule 4 counts (store/sqlite/fraud-store.ts, store/pg/fraud-store.ts): whole
 * minutes from fraud_minutes and the partial minutes at the ends from
 * fraud_sends must equal an exact count over fraud_sends for any window,
 * through sends, approvals and dropped (undelivered) sends.
 */
import { expect, test } from 'bun:test'
import { harnessPerTest } from '../kit/harness.ts'

const start = harnessPerTest()

test('conversion by minutes equals the exact count for random windows', async () => {
  const h = await start()
  let seed = 7
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
  const T0 = Date.UTC(2026, 0, 1)
  const prefixes = ['+99890123', '+99890124']
  await h.server.storage.write(async (r) => {
    for (let seq = 1; seq <= 600; seq++) {
      const at = T0 + Math.floor(rand() * 3 * 3_600_000)
      await r.fraud.recordSend({ seq, accountId: 1, at, country: 'UZ', prefix: prefixes[seq % 2]!, ipHash: null, counted: rand() < 0.9 })
      if (rand() < 0.3) await r.fraud.approved(seq, at + 1000)
      else if (rand() < 0.1) await r.fraud.dropSend(seq)
    }
  })
  const exact = async (country: string, prefix: string, a: number, b: number) => {
    const [row] = await h!.sql(
      `SELECT count(*) AS sends, count(approved_at) AS approved FROM fraud_sends WHERE account_id = 1 AND (country = $1 OR prefix = $2) AND at >= $3 AND at <= $4 AND counted`,
      [country, prefix, a, b],
    )
    return { sends: Number(row!.sends), approved: Number(row!.approved) }
  }
  let most = 0
  for (let i = 0; i < 300; i++) {
    const a = T0 - 60_000 + Math.floor(rand() * 3.2 * 3_600_000)
    const b = a + Math.floor(rand() * (i % 3 === 0 ? 120_000 : 3 * 3_600_000))
    const kind = i % 2 ? 'prefix' : 'country'
    const scope = kind === 'prefix' ? prefixes[i % 4 === 1 ? 0 : 1]! : 'UZ'
    const got = await h.server.storage.read((r) => r.fraud.conversion(1, kind, scope, a, b))
    expect(got).toEqual(await exact(kind === 'country' ? 'UZ' : '-', kind === 'prefix' ? scope : '-', a, b))
    most = Math.max(most, got.sends)
  }
  expect(most).toBeGreaterThan(200) // the windows span many whole minutes
})
