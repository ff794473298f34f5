/**
 * Picks and opens the engine `[database]` names (store/engine.ts): `url` set
 * selects PostgreSQL (store/pg/engine.ts), else the SQLite file at `path`
 * (store/sqlite/engine.ts). The only place that tells the engines apart;
 * what the CLI must know before opening one is asked here too.
 */
import { statSync } from 'node:fs'
import { resolve } from 'node:path'
import { accessMessage, isAccessError } from '../lib/fs-errors.ts'
import { pgConnection } from '../config/database.ts'
import type { Config } from '../config/schema.ts'
import type { Engine } from './engine.ts'
import { openPostgres, PG_BACKUP_REFUSAL } from './pg/engine.ts'
import { configuredSecret } from './secret.ts'
import { SqliteEngine } from './sqlite/engine.ts'
import { restoreDatabase, type RestoreResult } from './sqlite/restore.ts'

export interface OpenEngineOptions {
  /** Where `server.secret_env` and `database.password_env` are read (the loaded config's environment). */
  env?: Record<string, string | undefined>
  /** SQLite: a failed flush, after which the process must stop before answering (store/sqlite/storage.ts). */
  onFatal: (err: Error) => void
  /** Each write's end: null when it committed, else its failure (readiness follows them, store/write-health.ts). */
  onWriteResult?: (err: unknown) => void
  /** SQLite: the file did not exist and this open created it (new and empty); its absolute path. */
  onCreate?: (path: string) => void
  /** PostgreSQL: a database with no otpd tables is refused in these words instead of migrated (SQLite's missing file is the CLI's to refuse). */
  refuseEmpty?: (display: string) => string
}

export async function openEngine(config: Config, opts: OpenEngineOptions): Promise<Engine> {
  const env = opts.env ?? {}
  const database = config.database
  const secret = configuredSecret(config.server, env)
  if (database.url === undefined) {
    const created = missingDatabaseFile(config)
    const engine = new SqliteEngine({
      path: database.path,
      synchronous: database.synchronous,
      busyTimeoutMs: database.busy_timeout_ms,
      secret,
      onFatal: opts.onFatal,
      onWriteResult: opts.onWriteResult,
    })
    if (created !== undefined) opts.onCreate?.(created)
    return engine
  }
  // The config check refuses a URL without a secret; this holds for configs built in code too.
  if (secret === undefined)
    throw new Error(
      'database.url selects PostgreSQL, where every node must use the same server secret: set server.secret, server.secret_env or server.secret_file',
    )
  return openPostgres(pgConnection(database, env), secret, {
    poolSize: database.pool_size,
    lockTimeoutMs: database.busy_timeout_ms,
    onWriteResult: opts.onWriteResult,
    refuseEmpty: opts.refuseEmpty,
  })
}

/**
 * The database file the config names when it does not exist yet (opening it
 * would make a new, empty one), as an absolute path; undefined when it exists,
 * is in memory, or the engine has no file (PostgreSQL).
 */
export function missingDatabaseFile(config: Config): string | undefined {
  const { url, path } = config.database
  if (url !== undefined || path === ':memory:') return undefined
  try {
    statSync(path)
    return undefined
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return resolve(path)
    // A directory above it that this user cannot enter is not a missing database: said as what it is.
    if (isAccessError(err)) throw new Error(accessMessage('reach the database', path, err, 'to enter every directory above it, and to read and write it'))
    throw err
  }
}

/**
 * `otpd restore FILE` (store/sqlite/restore.ts): SQLite only; PostgreSQL is
 * restored with its own tools (docs/multi-node.md#backups).
 */
export function restoreBackup(config: Config, env: Record<string, string | undefined>, o: { file: string; secretFile?: string; now: number }): RestoreResult {
  if (config.database.url !== undefined)
    throw new Error('otpd restore restores a SQLite backup; a PostgreSQL database is restored with its own tools (pg_restore): see "Backups" in multi-node.md')
  return restoreDatabase({ ...o, databasePath: config.database.path, configured: configuredSecret(config.server, env) })
}

/** Throws, before anything is opened, when the engine the config names cannot make a backup (the message says how instead). */
export function checkBackupSupported(config: Config): void {
  if (config.database.url !== undefined) throw new Error(PG_BACKUP_REFUSAL)
}
