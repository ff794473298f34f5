/**
 * The engine a repository contract case runs on: the engine of the test run
 * (SQLite by default, PostgreSQL under OTPD_TEST_DATABASE=postgres, as the
 * rest of the suite), on a fresh database with every migration applied.
 * Cases reach the repositories only through `Storage.write` and `read`, as
 * the domain does, and read or set up what no repository writes with `sql`.
 *
 * The engines are built here and nowhere else in the suite, so that this is
 * the one place to change when an engine is opened another way.
 */
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pgConnection } from '../../../src/config/database.ts'
import type { Storage } from '../../../src/otp/ports/index.ts'
import { openPostgres } from '../../../src/store/pg/engine.ts'
import { openDatabase, openReader } from '../../../src/store/sqlite/db.ts'
import { SqliteStorage } from '../../../src/store/sqlite/storage.ts'
import { ON_PG, PG_TEST_SECRET } from '../../kit/harness.ts'
import { freshDatabase } from '../../kit/pg-cluster.ts'

export interface ContractEngine {
  name: 'sqlite' | 'postgres'
  storage: Storage
  /**
   * Runs SQL on a connection of its own (`$1` parameters, written so that
   * both engines take it): what a case reads back, or a state no repository
   * writes. Values come back as the driver gives them (a PostgreSQL bigint as
   * a string, a SQLite boolean as 0/1): compare through Number() or Boolean().
   */
  sql(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>
  close(): Promise<void>
}

/** A fresh, migrated database on the engine of the test run. */
export function openContractEngine(): Promise<ContractEngine> {
  return ON_PG ? openPg() : openSqlite()
}

async function openSqlite(): Promise<ContractEngine> {
  const dir = mkdtempSync(join(tmpdir(), 'otpd-contract-'))
  const path = join(dir, 'otpd.db')
  const writer = openDatabase({ path })
  const reader = openReader(writer, path)
  const storage = new SqliteStorage(writer, reader, {
    busyTimeoutMs: 5_000,
    onFatal: (err) => {
      throw err
    },
  })
  // Another connection, as another process: the storage sees its writes (data_version) and drops its copies.
  const other = new Database(path, { strict: true })
  other.run('PRAGMA busy_timeout = 5000')
  return {
    name: 'sqlite',
    storage,
    sql: async (text, params = []) => other.query(text.replace(/\$(\d+)/g, '?$1')).all(...(params as never[])) as Record<string, unknown>[],
    close: async () => {
      storage.close()
      other.close()
      reader.$client.close()
      writer.$client.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

async function openPg(): Promise<ContractEngine> {
  const url = await freshDatabase('contract')
  const engine = await openPostgres(
    pgConnection({ url } as Parameters<typeof pgConnection>[0], {}),
    { bytes: Buffer.from(PG_TEST_SECRET), source: 'server.secret' },
    { poolSize: 4, lockTimeoutMs: 5_000 },
  )
  const admin = new SQL({ url, max: 1 })
  return {
    name: 'postgres',
    storage: engine.storage,
    sql: async (text, params = []) => [...((await admin.unsafe(text, params)) as Record<string, unknown>[])],
    close: async () => {
      await admin.close()
      await engine.close()
    },
  }
}
