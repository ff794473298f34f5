/**
 * The engine a repository contract case runs on: the engine of the test run
 * (SQLite by default, PostgreSQL under OTPD_TEST_DATABASE=postgres, as the
 * rest of the suite), on a fresh database with every migration applied.
 * Cases reach the repositories only through `Storage.write` and `read`, as
 * the domain does, and read or set up what no repository writes with `sql`.
 *
 * The engines are opened here and nowhere else in the suite, through the
 * engine seam, so a case runs on exactly what `otpd serve` runs.
 */
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { resolveConfig } from '../../../src/app/load-config.ts'
import type { Storage } from '../../../src/otp/ports/index.ts'
import { openEngine } from '../../../src/store/open-engine.ts'
import { ON_PG, PG_TEST_SECRET } from '../../kit/harness.ts'
import { migratedDatabase } from '../../kit/pg-cluster.ts'

export interface ContractEngine {
  name: 'sqlite' | 'postgres'
  storage: Storage
  /** Engine.lateRows: whether a row can commit after one with a higher number. */
  lateRows: boolean
  /**
   * Runs SQL on a connection of its own (`$1` parameters, written so that
   * both engines take it): what a case reads back, or a state no repository
   * writes. Values come back as the driver gives them (a PostgreSQL bigint as
   * a string, a SQLite boolean as 0/1): compare through Number() or Boolean().
   */
  sql(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>
  close(): Promise<void>
}

/**
 * A fresh, migrated database on the engine of the test run, opened the way
 * otpd opens one (store/open-engine.ts), from the same `[database]` config.
 */
export async function openContractEngine(): Promise<ContractEngine> {
  const dir = mkdtempSync(join(tmpdir(), 'otpd-contract-'))
  const path = join(dir, 'otpd.db')
  const raw = ON_PG ? { database: { path, url: await migratedDatabase('contract'), pool_size: 4 }, server: { secret: PG_TEST_SECRET } } : { database: { path } }
  const engine = await openEngine(resolveConfig(raw, 'test', {}), {
    onFatal: (err) => {
      throw err
    },
  })
  const sql = ON_PG ? pgSql(raw.database.url as string) : sqliteSql(path)
  return {
    name: engine.name,
    storage: engine.storage,
    lateRows: engine.lateRows,
    sql: sql.run,
    close: async () => {
      await sql.close()
      await engine.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Another connection, as another process: the SQLite storage sees its writes (data_version) and drops its copies. */
function sqliteSql(path: string) {
  const other = new Database(path, { strict: true })
  other.run('PRAGMA busy_timeout = 5000')
  return {
    run: async (text: string, params: unknown[] = []) => other.query(text.replace(/\$(\d+)/g, '?$1')).all(...(params as never[])) as Record<string, unknown>[],
    close: async () => other.close(),
  }
}

function pgSql(url: string) {
  const admin = new SQL({ url, max: 1 })
  return {
    run: async (text: string, params: unknown[] = []) => [...((await admin.unsafe(text, params)) as Record<string, unknown>[])],
    close: () => admin.close(),
  }
}
