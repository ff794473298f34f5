/**
 * The event dispatcher's claim on SQLite (store/sqlite/webhook-store.ts)
 * counts each endpoint's leases along the partial index of leases, and reads
 * its due deliveries along the partial index of its pending ones in
 * `next_at` order, stopping at its limit: a backlog of pending deliveries
 * (one endpoint's, or all of them) does not make each claim read and sort
 * all of them (docs/benchmarks.md#where-a-requests-time-goes).
 */
import { Database } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { forSqlite } from '../../src/store/sql/dialect.ts'
import { applyMigrations } from '../../src/store/sqlite/db.ts'
import { SQLITE_ENDPOINT_DUE, SQLITE_HAS_DUE, SQLITE_ROOM } from '../../src/store/sqlite/webhook-store.ts'

test('the claim and the due check read leases and due deliveries along their endpoint indexes, with no sort', () => {
  const db = new Database(':memory:')
  applyMigrations(db)
  // The plan SQLite chooses for the statement as otpd prepares it (otpd gathers no statistics).
  for (const [text, params, indexes] of [
    [SQLITE_ROOM, [0, 32], ['event_deliveries_leased']],
    [SQLITE_ENDPOINT_DUE, [0, 1, 32], ['event_deliveries_endpoint_due']],
    [SQLITE_HAS_DUE, [0, 32], ['event_deliveries_leased', 'event_deliveries_endpoint_due']],
  ] as const) {
    const plan = db
      .query<{ detail: string }, number[]>(`EXPLAIN QUERY PLAN ${forSqlite(text)}`)
      .all(...params)
      .map((r) => r.detail)
    for (const index of indexes) expect(plan.some((d) => d.includes(`USING INDEX ${index}`) || d.includes(`USING COVERING INDEX ${index}`))).toBe(true)
    expect(plan.some((d) => d.includes('TEMP B-TREE'))).toBe(false)
    expect(plan.some((d) => /SCAN (d|l)\b(?! USING)/.test(d))).toBe(false)
  }
  db.close()
})
