/**
 * Migration 0001_key_hit_seq on a database with hits in flight: existing hits
 * are numbered 1, 2, 3... per key in time order, so the window in progress
 * keeps counting across the upgrade.
 */
import { Database } from 'bun:sqlite'
import { expect } from 'bun:test'
import { applyMigrations } from '../../src/store/sqlite/db.ts'
import { migrationFiles, migrationJournal } from '../../src/store/sqlite/migrations/index.ts'
import { testSqliteOnly } from '../kit/harness.ts'

testSqliteOnly('existing key hits get per-key sequence numbers in time order', () => {
  const db = new Database(':memory:')
  // The database as version 0000 left it, with hits of two keys interleaved.
  for (const stmt of migrationFiles['0000_init']!.split('--> statement-breakpoint')) if (stmt.trim()) db.run(stmt)
  db.run('CREATE TABLE "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)')
  db.run('INSERT INTO "__drizzle_migrations" (hash, created_at) VALUES (?, ?)', ['x', migrationJournal.entries[0]!.when])
  for (const [key, at] of [
    [1, 30],
    [2, 10],
    [1, 10],
    [1, 20],
    [2, 5],
  ])
    db.run('INSERT INTO key_hits (key_id, at) VALUES (?, ?)', [key!, at!])
  applyMigrations(db)
  const rows = db.query<{ key_id: number; seq: number; at: number }, []>('SELECT key_id, seq, at FROM key_hits ORDER BY key_id, seq').all()
  expect(rows).toEqual([
    { key_id: 1, seq: 1, at: 10 },
    { key_id: 1, seq: 2, at: 20 },
    { key_id: 1, seq: 3, at: 30 },
    { key_id: 2, seq: 1, at: 5 },
    { key_id: 2, seq: 2, at: 10 },
  ])
  expect(() => db.run('INSERT INTO key_hits (key_id, seq, at) VALUES (1, 3, 40)')).toThrow(/UNIQUE/)
})
