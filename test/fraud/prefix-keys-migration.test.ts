/**
 * The migration to prefix counting keys (SQLite 0010, PostgreSQL 0003) on a
 * database with fraud rows written before it, each holding a prefix in
 * clear. SQL cannot compute the HMAC (its key is the server secret, not in
 * the database), so the prefix is dropped: a send's row keeps counting for
 * its IP and country (its prefix becomes its country, as a short number's
 * is), the per-minute prefix counts go, and blocks (which may name their
 * prefix) stay.
 */
import { Database } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { SQL } from 'bun'
import { applyMigrations as applyPg } from '../../src/store/pg/migrate.ts'
import { migrationFiles as pgFiles, migrationJournal as pgJournal } from '../../src/store/pg/migrations/index.ts'
import { applyMigrations as applySqlite } from '../../src/store/sqlite/db.ts'
import { migrationFiles as sqliteFiles, migrationJournal as sqliteJournal } from '../../src/store/sqlite/migrations/index.ts'
import { ON_PG } from '../kit/harness.ts'
import { freshDatabase } from '../kit/pg-cluster.ts'

const ROWS = [
  `INSERT INTO fraud_sends (seq, account_id, at, country, prefix, ip_hash, counted) VALUES (1, 1, 60000, 'UZ', '+99890123', NULL, $1)`,
  `INSERT INTO fraud_sends (seq, account_id, at, country, prefix, ip_hash, counted) VALUES (2, 1, 60001, 'VA', 'VA', NULL, $1)`,
  `INSERT INTO fraud_minutes (account_id, kind, scope, minute, sends, approved) VALUES (1, 'country', 'UZ', 1, 1, 0)`,
  `INSERT INTO fraud_minutes (account_id, kind, scope, minute, sends, approved) VALUES (1, 'prefix', '+99890123', 1, 1, 0)`,
  `INSERT INTO fraud_blocks (account_id, kind, scope, started_at, until, level, counts_from) VALUES (1, 'prefix', '+99890123', 0, 900000, 0, 0)`,
]

const AFTER = {
  sends: [
    { seq: 1, country: 'UZ', prefix: 'UZ' },
    { seq: 2, country: 'VA', prefix: 'VA' },
  ],
  minutes: [{ kind: 'country', scope: 'UZ', sends: 1 }],
  blocks: [{ kind: 'prefix', scope: '+99890123' }],
}

const SENDS = 'SELECT seq, country, prefix FROM fraud_sends ORDER BY seq'
const MINUTES = 'SELECT kind, scope, sends FROM fraud_minutes ORDER BY kind, scope'
const BLOCKS = 'SELECT kind, scope FROM fraud_blocks'
const statements = (text: string) => text.split('--> statement-breakpoint').filter((s) => s.trim())
const before = <T extends { tag: string }>(entries: T[], tag: string) =>
  entries.slice(
    0,
    entries.findIndex((e) => e.tag === tag),
  )

test.skipIf(ON_PG)('SQLite 0010: rows with a prefix in clear lose it (sends count by country; prefix minutes dropped; blocks kept)', () => {
  const db = new Database(':memory:')
  const earlier = before(sqliteJournal.entries, '0010_fraud_prefix_keys')
  for (const e of earlier) for (const s of statements(sqliteFiles[e.tag]!)) db.run(s)
  db.run('CREATE TABLE "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)')
  db.run('INSERT INTO "__drizzle_migrations" (hash, created_at) VALUES (?, ?)', ['x', earlier.at(-1)!.when])
  for (const r of ROWS) db.run(r.replace('$1', '1'))
  applySqlite(db)
  expect(db.query(SENDS).all()).toEqual(AFTER.sends)
  expect(db.query(MINUTES).all()).toEqual(AFTER.minutes)
  expect(db.query(BLOCKS).all()).toEqual(AFTER.blocks)
})

test.skipIf(!ON_PG)('PostgreSQL 0003: rows with a prefix in clear lose it (sends count by country; prefix minutes dropped; blocks kept)', async () => {
  const sql = new SQL({ url: await freshDatabase(), max: 1 })
  try {
    const earlier = before(pgJournal.entries, '0003_fraud_prefix_keys')
    await sql.unsafe('CREATE SCHEMA IF NOT EXISTS "drizzle"')
    await sql.unsafe('CREATE TABLE "drizzle"."__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)')
    for (const e of earlier) for (const s of statements(pgFiles[e.tag]!)) await sql.unsafe(s)
    await sql.unsafe('INSERT INTO "drizzle"."__drizzle_migrations" (hash, created_at) VALUES ($1, $2)', ['x', earlier.at(-1)!.when])
    for (const r of ROWS) await sql.unsafe(r.replace('$1', 'true'))
    await applyPg(sql, 'test')
    // bigint columns come back as text: compared as numbers.
    const rows = async (q: string): Promise<Record<string, unknown>[]> =>
      [...((await sql.unsafe(q)) as Record<string, unknown>[])].map((r) =>
        Object.fromEntries(Object.entries(r).map(([k, v]) => [k, k === 'seq' || k === 'sends' ? Number(v) : v])),
      )
    expect(await rows(SENDS)).toEqual(AFTER.sends)
    expect(await rows(MINUTES)).toEqual(AFTER.minutes)
    expect(await rows(BLOCKS)).toEqual(AFTER.blocks)
  } finally {
    await sql.close()
  }
})
