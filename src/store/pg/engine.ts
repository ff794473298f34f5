/**
 * The PostgreSQL engine (store/engine.ts): the pool, the migrations under the
 * start lock, the secret's fingerprint check, and the storage. Every failure
 * to start is one sentence naming the database (its URL without password).
 * PostgreSQL checkpoints and flushes by itself: no background work here.
 */
import type { SQL } from 'bun'
import type { PgConnection } from '../../config/database.ts'
import { Hasher } from '../../lib/secrets.ts'
import type { Engine } from '../engine.ts'
import type { ConfiguredSecret } from '../secret.ts'
import { openClient } from './client.ts'
import { StoreRefusedError } from '../refused.ts'
import { checkSecret } from './start-checks.ts'
import { applyMigrations, migrationsCurrent } from './migrate.ts'
import { PgStorage, xactFunctionsFor, type PgStorageOptions, type XactFunctions } from './storage.ts'
import { sweepPg } from './sweep.ts'

export interface PgEngineOptions extends PgStorageOptions {
  poolSize: number
  lockTimeoutMs: number
  /**
   * A database with no otpd tables yet is refused, in these words, instead of
   * migrated (a CLI command without --init: docs/operating.md#cli).
   */
  refuseEmpty?: (display: string) => string
}

export interface PgEngine extends Engine {
  readonly name: 'postgres'
  /** The pool. Tests reach it; above the seam nothing does. */
  readonly sql: SQL
  readonly storage: PgStorage
}

/** `otpd backup`'s answer on PostgreSQL: its own tools back it up. */
export const PG_BACKUP_REFUSAL =
  'otpd backup copies a SQLite file, and this config uses PostgreSQL (database.url): back it up with pg_dump (e.g. pg_dump -Fc -f otpd.dump postgres://user@host:5432/otpd) and keep the server secret with it'

/** How long a readiness look may take before it counts as a failure. */
const CHECK_TIMEOUT_MS = 2_000

export async function openPostgres(conn: PgConnection, secret: ConfiguredSecret, opts: PgEngineOptions): Promise<PgEngine> {
  const sql = openClient(conn, { poolSize: opts.poolSize, lockTimeoutMs: opts.lockTimeoutMs })
  let xact: XactFunctions = 'xact'
  try {
    const version = (await sql.unsafe("SELECT current_setting('server_version_num')::int AS v").catch((err: unknown) => {
      throw new StoreRefusedError(`cannot reach the PostgreSQL database ${conn.display}: ${err instanceof Error ? err.message : String(err)}`)
    })) as { v: number }[]
    xact = xactFunctionsFor(version[0]!.v)
    if (opts.refuseEmpty !== undefined) {
      const [row] = (await sql.unsafe("SELECT to_regclass('public.api_keys') IS NULL AS empty")) as { empty: boolean }[]
      if (row?.empty) throw new StoreRefusedError(opts.refuseEmpty(conn.display))
    }
    await applyMigrations(sql, conn.display)
    await checkSecret(sql, secret, conn.display)
  } catch (err) {
    await sql.close().catch(() => undefined)
    if (err instanceof StoreRefusedError) throw err
    throw new StoreRefusedError(`cannot open the PostgreSQL database ${conn.display}: ${err instanceof Error ? err.message : String(err)}`)
  }
  // A write whose COMMIT answer was lost asks its outcome on a connection of its own (store/pg/storage.ts).
  const resolver = openClient(conn, { poolSize: 1, lockTimeoutMs: opts.lockTimeoutMs, connectTimeoutS: 2 })
  const storage = new PgStorage(sql, { ...opts, resolver, xact })
  // Readiness looks on a connection of its own: requests queued for a busy
  // pool (which wait, by design) must not make a reachable database look down.
  const probe = openClient(conn, { poolSize: 1, lockTimeoutMs: opts.lockTimeoutMs })
  return {
    name: 'postgres',
    lateRows: true,
    sql,
    storage,
    display: conn.display,
    hasher: new Hasher(secret.bytes),
    check: () =>
      withTimeout(
        probe.unsafe('SELECT 1').then(() => undefined),
        CHECK_TIMEOUT_MS,
        `the PostgreSQL database ${conn.display} did not answer within ${CHECK_TIMEOUT_MS} ms`,
      ),
    migrationsCurrent: () => migrationsCurrent(probe),
    sweep: (now, days, maxRows, idempotencyHours) => sweepPg(sql, now, days, maxRows, idempotencyHours),
    sizes: () => [],
    warnings: [],
    startBackground: () => {},
    startRollupPlanner: () => null,
    consoleReads: () => null,
    stopBackground: async () => {},
    backup: async () => {
      throw new Error(PG_BACKUP_REFUSAL)
    },
    close: async () => {
      storage.close()
      await Promise.all([sql.close({ timeout: 5 }), probe.close(), resolver.close()])
    },
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer))
}
