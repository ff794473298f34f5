/**
 * The two drizzle schemas (src/store/sqlite/schema.ts, src/store/pg/schema.ts)
 * declare the same tables, columns, nullability, primary keys and indexes,
 * but for the differences listed here, each with its reason; and each schema
 * is what its engine's migrations build (the migrated database's own catalog).
 * A new difference fails, and so does a listed one that is gone.
 */
import { describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as pgSchema from '../../src/store/pg/schema.ts'
import { openDatabase } from '../../src/store/sqlite/db.ts'
import * as sqliteSchema from '../../src/store/sqlite/schema.ts'
import { ON_PG } from '../kit/harness.ts'
import { migratedDatabase } from '../kit/pg-cluster.ts'
import { drizzleShape, pgCatalogShape, shapeDifferences, sqliteCatalogShape } from '../kit/schema-shape.ts'

/** Every difference between the schemas, and why it is one. */
const ALLOWED: Record<string, string> = {
  'table account_balances: only in PostgreSQL':
    "an account's balance is spread over rows that concurrent sends debit in parallel (docs/multi-node.md#an-accounts-balance)",
  'accounts.balance: only in SQLite': "SQLite keeps an account's balance in its row: one writer at a time, nothing to spread",
  'table event_legacy_ids: only in SQLite':
    "ids of SQLite's events from before an id named its row (store/sqlite/sweep.ts); PostgreSQL finds events by id through events_id",
  'events index events_id: only in PostgreSQL': "PostgreSQL finds an event by its id through this index; SQLite's ids name their row",
  'events.verification_seq: only in SQLite': "SQLite's look-ups by verification lead with the verification's row number, so that index grows at its end",
  'events index events_verification_seq: only in SQLite': 'the index that verification_seq leads (above)',
  'events index events_verification: only in PostgreSQL':
    "unique per verification and sequence: the second line under the sequence read under the verification's row lock, across nodes",
  'key_hits index key_hits_at: only in PostgreSQL':
    "PostgreSQL's sweep deletes old hits by time through it; SQLite's sweeps the head of the table in rowid order",
  'recipient_failures index recipient_failures_at: only in PostgreSQL':
    "PostgreSQL's sweep deletes old failures by time through it; SQLite's sweeps in rowid order",
  'recipient_failures.id: only in PostgreSQL': "the row id PostgreSQL's sweep deletes by; SQLite's rows have their implicit rowid",
  'recipient_failures primary key: () in SQLite, (id) in PostgreSQL': 'that id (above) is the primary key',
}

const NAMES: [string, string] = ['SQLite', 'PostgreSQL']

test('the SQLite and PostgreSQL schemas differ only as listed, each difference with its reason', () => {
  const differences = shapeDifferences(drizzleShape(sqliteSchema, 'sqlite'), drizzleShape(pgSchema, 'pg'), NAMES)
  expect(differences).toEqual(Object.keys(ALLOWED).sort())
  for (const reason of Object.values(ALLOWED)) expect(reason.length).toBeGreaterThan(20)
})

test('the comparison sees a column, a nullability and an index that differ', () => {
  const shape = drizzleShape(sqliteSchema, 'sqlite')
  const changed = structuredClone(shape)
  changed.verifications!.columns.extra = true
  changed.accounts!.columns.code_length = !changed.accounts!.columns.code_length
  changed.key_hits!.indexes.key_hits_key_seq!.unique = false
  expect(shapeDifferences(shape, changed, NAMES)).toEqual([
    'accounts.code_length: NOT NULL only in PostgreSQL',
    'key_hits index key_hits_key_seq: differs',
    'verifications.extra: only in PostgreSQL',
  ])
})

describe('each schema is what its migrations build', () => {
  test.skipIf(ON_PG)('SQLite: a migrated database holds the tables, columns and indexes of src/store/sqlite/schema.ts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'otpd-schema-'))
    const db = openDatabase({ path: join(dir, 'otpd.db') })
    try {
      expect(shapeDifferences(drizzleShape(sqliteSchema, 'sqlite'), sqliteCatalogShape(db.$client), ['the schema', 'the database'])).toEqual([])
    } finally {
      db.$client.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test.skipIf(!ON_PG)('PostgreSQL: a migrated database holds the tables, columns and indexes of src/store/pg/schema.ts', async () => {
    const sql = new SQL({ url: await migratedDatabase('schema'), max: 1 })
    try {
      expect(shapeDifferences(drizzleShape(pgSchema, 'pg'), await pgCatalogShape(sql), ['the schema', 'the database'])).toEqual([])
    } finally {
      await sql.close()
    }
  })
})
