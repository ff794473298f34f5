/**
 * A PostgreSQL database as an earlier release left it: the embedded
 * migrations before one of them applied, with drizzle's bookkeeping rows as
 * store/pg/migrate.ts writes them, so that applyMigrations then applies the
 * rest (an upgrade).
 */
import type { SQL } from 'bun'
import { migrationFiles, migrationJournal } from '../../src/store/pg/migrations/index.ts'

/** Applies every migration before `tag` (its journal name, such as `0007_balance_stripes`). */
export async function migrateUntil(sql: SQL, tag: string): Promise<void> {
  const at = migrationJournal.entries.findIndex((e) => e.tag === tag)
  if (at < 0) throw new Error(`no migration ${tag}`)
  await sql.unsafe('CREATE SCHEMA IF NOT EXISTS "drizzle"')
  await sql.unsafe('CREATE TABLE IF NOT EXISTS "drizzle"."__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)')
  for (const e of migrationJournal.entries.slice(0, at)) {
    for (const stmt of migrationFiles[e.tag]!.split('--> statement-breakpoint')) if (stmt.trim()) await sql.unsafe(stmt)
    await sql.unsafe('INSERT INTO "drizzle"."__drizzle_migrations" (hash, created_at) VALUES ($1, $2)', ['-', e.when])
  }
}
