/**
 * Applies the embedded migrations (store/pg/migrations/) at start, under a
 * session advisory lock: nodes (and CLI commands) starting together wait for
 * one another, and the first applies each migration once, in one transaction
 * with its bookkeeping row. Same bookkeeping as drizzle's migrator
 * (`drizzle.__drizzle_migrations`: hash, folder millis), so drizzle-kit stays
 * compatible. A database with a migration newer than this binary knows is
 * refused before anything is applied (store/pg/start-checks.ts).
 */
import type { SQL } from 'bun'
import { createHash } from 'node:crypto'
import { StoreRefusedError } from '../refused.ts'
import { START_LOCK } from './start-checks.ts'
import { migrationFiles, migrationJournal } from './migrations/index.ts'

const TABLE = '"drizzle"."__drizzle_migrations"'

export async function applyMigrations(sql: SQL, display: string): Promise<void> {
  const conn = await sql.reserve()
  try {
    await conn.unsafe('SELECT pg_advisory_lock($1::bigint)', [START_LOCK.toString()])
    try {
      await conn.unsafe('CREATE SCHEMA IF NOT EXISTS "drizzle"')
      await conn.unsafe(`CREATE TABLE IF NOT EXISTS ${TABLE} (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`)
      const last = await newestApplied(conn)
      const newest = migrationJournal.entries.at(-1)?.when ?? 0
      if (last > newest) {
        throw new StoreRefusedError(
          `the PostgreSQL database ${display} has schema changes from a newer otpd (migration of ${new Date(last).toISOString()}): upgrade otpd`,
        )
      }
      for (const entry of migrationJournal.entries) {
        if (last >= entry.when) continue
        const text = migrationFiles[entry.tag]
        if (text === undefined) throw new Error(`migration ${entry.tag} is in the journal but not embedded`)
        const hash = createHash('sha256').update(text).digest('hex')
        await conn.begin(async (tx) => {
          for (const stmt of text.split('--> statement-breakpoint')) if (stmt.trim()) await tx.unsafe(stmt)
          await tx.unsafe(`INSERT INTO ${TABLE} (hash, created_at) VALUES ($1, $2)`, [hash, entry.when])
        })
      }
    } finally {
      await conn.unsafe('SELECT pg_advisory_unlock($1::bigint)', [START_LOCK.toString()]).catch(() => undefined)
    }
  } finally {
    conn.release()
  }
}

async function newestApplied(sql: SQL): Promise<number> {
  const rows = (await sql.unsafe(`SELECT max(created_at) AS at FROM ${TABLE}`)) as { at: unknown }[]
  return Number(rows[0]?.at ?? 0)
}

/** Whether the database has every migration this binary embeds (for /readyz). */
export async function migrationsCurrent(sql: SQL): Promise<boolean> {
  const newest = migrationJournal.entries.at(-1)?.when ?? 0
  return (await newestApplied(sql)) >= newest
}
