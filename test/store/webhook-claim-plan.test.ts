/**
 * The event dispatcher's claim on SQLite (store/sqlite/webhook-store.ts) walks
 * the partial index of pending deliveries in `next_at` order and stops at its
 * limit: a backlog of pending deliveries does not make each claim read and
 * sort all of them (docs/benchmarks.md#where-a-requests-time-goes).
 */
import { Database } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { forSqlite } from '../../src/store/sql/dialect.ts'
import { applyMigrations } from '../../src/store/sqlite/db.ts'
import { SQLITE_CLAIM, SQLITE_HAS_DUE } from '../../src/store/sqlite/webhook-store.ts'

test('the claim and the due check read the pending deliveries along event_deliveries_due, with no sort', () => {
  const db = new Database(':memory:')
  applyMigrations(db)
  // The plan SQLite chooses for the statement as otpd prepares it (otpd gathers no statistics).
  for (const [text, params] of [
    [SQLITE_CLAIM, [0, 32]],
    [SQLITE_HAS_DUE, [0]],
  ] as const) {
    const plan = db
      .query<{ detail: string }, number[]>(`EXPLAIN QUERY PLAN ${forSqlite(text)}`)
      .all(...params)
      .map((r) => r.detail)
    expect(plan.some((d) => d.includes('USING INDEX event_deliveries_due'))).toBe(true)
    expect(plan.some((d) => d.includes('TEMP B-TREE'))).toBe(false)
  }
  db.close()
})
