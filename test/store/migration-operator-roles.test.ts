/**
 * Migration 0016_operator_roles (SQLite) and 0011_operator_roles
 * (PostgreSQL) on a database with operators and sessions: every operator
 * that existed becomes `admin` (the role it had in effect), its credential
 * generation and its sessions' start at 0, so sessions signed in before the
 * upgrade keep working; accounts keep custom texts allowed.
 */
import { Database } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { applyMigrations as applyPg } from '../../src/store/pg/migrate.ts'
import { migrationFiles, migrationJournal } from '../../src/store/sqlite/migrations/index.ts'
import { applyMigrations as applySqlite } from '../../src/store/sqlite/db.ts'
import { ON_PG } from '../kit/harness.ts'
import { freshDatabase } from '../kit/pg-cluster.ts'
import { migrateUntil } from '../kit/pg-migrations.ts'

const BEFORE = [
  "INSERT INTO operators (name, password_hash, status, created_at, password_changed_at) VALUES ('alice', 'h', 'active', 1, 1), ('bob', 'h', 'disabled', 2, 2)",
  "INSERT INTO console_sessions (token_hash, operator_id, created_at, last_seen_at) VALUES (X'0102', 1, 10, 10)",
]
const OPERATORS = 'SELECT name, role, credential_generation FROM operators ORDER BY id'
const EXPECTED = [
  { name: 'alice', role: 'admin', credential_generation: 0 },
  { name: 'bob', role: 'admin', credential_generation: 0 },
]

describe.skipIf(ON_PG)('on SQLite', () => {
  test('existing operators become admin; their sessions keep generation 0; accounts allow custom texts', () => {
    const db = new Database(':memory:')
    const at = migrationJournal.entries.findIndex((e) => e.tag === '0016_operator_roles')
    db.run('CREATE TABLE "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)')
    for (const e of migrationJournal.entries.slice(0, at)) {
      for (const stmt of migrationFiles[e.tag]!.split('--> statement-breakpoint')) if (stmt.trim()) db.run(stmt)
      db.run('INSERT INTO "__drizzle_migrations" (hash, created_at) VALUES (?, ?)', ['x', e.when])
    }
    for (const stmt of BEFORE) db.run(stmt)
    applySqlite(db)
    expect(db.query(OPERATORS).all()).toEqual(EXPECTED)
    expect(db.query('SELECT credential_generation FROM console_sessions').all()).toEqual([{ credential_generation: 0 }])
    expect(db.query('SELECT custom_text FROM accounts').all()).toEqual([{ custom_text: 1 }])
    db.close()
  })
})

describe.skipIf(!ON_PG)('on PostgreSQL', () => {
  test('existing operators become admin; their sessions keep generation 0; accounts allow custom texts', async () => {
    const sql = new SQL(await freshDatabase('roles_migration'))
    try {
      await migrateUntil(sql, '0011_operator_roles')
      for (const stmt of BEFORE) await sql.unsafe(stmt.replace("X'0102'", "'\\x0102'::bytea"))
      await applyPg(sql, 'test')
      expect(await sql.unsafe(OPERATORS)).toEqual(EXPECTED)
      expect(await sql.unsafe('SELECT credential_generation FROM console_sessions')).toEqual([{ credential_generation: 0 }])
      expect(await sql.unsafe('SELECT custom_text FROM accounts')).toEqual([{ custom_text: true }])
    } finally {
      await sql.close()
    }
  })
})
