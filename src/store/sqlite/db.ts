/**
 * Opens the SQLite database: busy_timeout first (the CLI writes while the server
 * runs), then WAL, foreign keys and the synchronous level, then the embedded
 * migrations in one IMMEDIATE transaction; refused first when the file is not
 * writable or the schema is newer (store/sqlite/start-checks.ts). A new file is
 * created 0600 whatever the umask, as the secret is (docs/operating.md#data-and-secrets):
 * SQLite would make it and its -wal and -shm files readable by every user.
 * An existing file is left as it is, with a warning when wider.
 */
import { Database } from 'bun:sqlite'
import { createHash } from 'node:crypto'
import { closeSync, mkdirSync, openSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import { accessMessage, isAccessError } from '../../lib/fs-errors.ts'
import { StoreRefusedError } from '../refused.ts'
import { checkSchemaNotNewer, checkWritable, namingPath } from './start-checks.ts'
import { migrationFiles, migrationJournal } from './migrations/index.ts'
import { schema } from './schema.ts'

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database }

export interface OpenOptions {
  path: string
  synchronous?: 'FULL' | 'NORMAL'
  busyTimeoutMs?: number
}

export function openDatabase(opts: OpenOptions): Db {
  const { path } = opts
  if (path !== ':memory:') {
    const dir = dirname(path)
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 })
    } catch (err) {
      // mkdir -p names the level it could not make: otpd needs write access to the directory above that one.
      const failed = (err as NodeJS.ErrnoException).path ?? dir
      if (isAccessError(err))
        throw new StoreRefusedError(
          accessMessage(
            'create the database directory',
            failed,
            err,
            `write access to ${resolve(dirname(failed))} to create it, or ${resolve(dir)} made for it`,
          ),
        )
      throw new StoreRefusedError(`cannot create the database directory ${resolve(dir)}: ${err instanceof Error ? err.message : String(err)}`)
    }
    checkWritable(path)
    createPrivate(path)
  }
  const client = namingPath(path, () => new Database(path, { create: true, strict: true }))
  try {
    namingPath(path, () => {
      client.run(`PRAGMA busy_timeout = ${Math.trunc(opts.busyTimeoutMs ?? 5000)}`)
      client.run('PRAGMA journal_mode = WAL')
      client.run('PRAGMA foreign_keys = ON')
      client.run(`PRAGMA synchronous = ${opts.synchronous ?? 'FULL'}`)
      // Savepoint and statement journals in memory, not in a temporary file.
      client.run('PRAGMA temp_store = MEMORY')
      checkSchemaNotNewer(client, path)
      applyMigrations(client)
    })
  } catch (err) {
    client.close()
    throw err
  }
  return drizzle({ client, schema }) as Db
}

/** Creates the database file empty and 0600 (an empty file is an empty SQLite database); one that exists is left alone. */
function createPrivate(path: string): void {
  try {
    closeSync(openSync(path, 'wx', 0o600))
  } catch (err) {
    if ((err as { code?: unknown }).code === 'EEXIST') return
    throw new StoreRefusedError(`cannot create the database file ${resolve(path)}: ${err instanceof Error ? err.message : String(err)}`)
  }
}

/** The database's files (the database, -wal, -shm) that other users may read or write: one warning each, with its absolute path and mode. */
export function widerThanPrivate(path: string): string[] {
  if (path === ':memory:') return []
  const out: string[] = []
  for (const file of [path, `${path}-wal`, `${path}-shm`].map((f) => resolve(f))) {
    let mode: number
    try {
      mode = statSync(file).mode & 0o777
    } catch {
      continue
    }
    if ((mode & 0o077) === 0) continue
    const octal = mode.toString(8).padStart(4, '0')
    out.push(`the database file ${file} has mode ${octal}: other users may read it (otpd creates its files 0600; chmod 600 ${file})`)
  }
  return out
}

/**
 * A second connection for reads (store/sqlite/storage.ts): in WAL mode it sees the
 * last committed state and never waits for the writer. An in-memory database
 * has no second connection: it reads on the writer's.
 */
export function openReader(writer: Db, path: string): Db {
  if (path === ':memory:') return writer
  const client = new Database(path, { readonly: true, strict: true })
  client.run('PRAGMA temp_store = MEMORY')
  return drizzle({ client, schema }) as Db
}

const MIGRATIONS_TABLE = '__drizzle_migrations'

/**
 * Same bookkeeping as drizzle's own migrator (table, hash, folder millis), so
 * drizzle-kit stays compatible, but the read of the last applied migration and
 * the writes share one IMMEDIATE transaction: a CLI and a server starting at
 * the same moment cannot both apply the same migration.
 */
export function applyMigrations(client: Database): void {
  const tx = client.transaction(() => {
    client.run(`CREATE TABLE IF NOT EXISTS "${MIGRATIONS_TABLE}" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)`)
    const last = client.query<{ created_at: number }, []>(`SELECT created_at FROM "${MIGRATIONS_TABLE}" ORDER BY created_at DESC LIMIT 1`).get()
    for (const entry of migrationJournal.entries) {
      if (last && Number(last.created_at) >= entry.when) continue
      const text = migrationFiles[entry.tag]
      if (text === undefined) throw new Error(`migration ${entry.tag} is in the journal but not embedded`)
      for (const stmt of text.split('--> statement-breakpoint')) {
        if (stmt.trim()) client.run(stmt)
      }
      const hash = createHash('sha256').update(text).digest('hex')
      client.run(`INSERT INTO "${MIGRATIONS_TABLE}" (hash, created_at) VALUES (?, ?)`, [hash, entry.when])
    }
  })
  tx.immediate()
}

/** Latest migration the binary knows, and whether the database has it (for readiness checks). */
export function migrationsCurrent(client: Database): boolean {
  const last = client.query<{ created_at: number }, []>(`SELECT max(created_at) AS created_at FROM "${MIGRATIONS_TABLE}"`).get()
  const newest = migrationJournal.entries.at(-1)?.when ?? 0
  return Number(last?.created_at ?? 0) >= newest
}
