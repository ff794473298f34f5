/**
 * The databases a throwaway cluster hands out, made over one Bun SQL
 * connection (no psql process per database): empty ones, and migrated ones
 * cloned from a template that the embedded migrations built once per cluster
 * (`CREATE DATABASE ... TEMPLATE`), which costs about what an empty one does.
 * One of each prefix and kind is made ahead while the caller works.
 */
import { SQL } from 'bun'
import { applyMigrations } from '../../src/store/pg/migrate.ts'

/** The migrated template: no client connects to it once built (a template with a session cannot be copied). */
const TEMPLATE = 'otpd_template'

export interface DatabaseMaker {
  /** A new empty database; returns its URL. */
  fresh(prefix: string): Promise<string>
  /** A new database with every embedded migration applied; returns its URL. */
  migrated(prefix: string): Promise<string>
  /** Closes the maker's connection (before the cluster stops). */
  close(): void
}

export function databaseMaker(url: (database: string) => string): DatabaseMaker {
  let admin: SQL | undefined
  let template: Promise<void> | undefined
  let seq = 0
  const spares = new Map<string, Promise<string | null>>()
  const connection = () => {
    admin ??= new SQL({ url: url('postgres'), max: 1 })
    return admin
  }
  const buildTemplate = async () => {
    await connection().unsafe(`CREATE DATABASE ${TEMPLATE}`)
    const sql = new SQL({ url: url(TEMPLATE), max: 1 })
    try {
      await applyMigrations(sql, TEMPLATE)
    } finally {
      await sql.close()
    }
    await connection().unsafe(`ALTER DATABASE ${TEMPLATE} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`)
  }
  const create = async (prefix: string, migrated: boolean) => {
    const name = `${prefix}_${process.pid}_${++seq}_${Math.random().toString(36).slice(2, 8)}`
    if (migrated) await (template ??= buildTemplate())
    await connection().unsafe(`CREATE DATABASE "${name}"${migrated ? ` TEMPLATE ${TEMPLATE}` : ''}`)
    return url(name)
  }
  const take = async (prefix: string, migrated: boolean) => {
    const kind = `${migrated ? 'migrated' : 'empty'}:${prefix}`
    const ready = spares.get(kind)
    spares.delete(kind)
    const made = (ready && (await ready)) || (await create(prefix, migrated))
    spares.set(
      kind,
      create(prefix, migrated).catch(() => null),
    )
    return made
  }
  return {
    fresh: (prefix) => take(prefix, false),
    migrated: (prefix) => take(prefix, true),
    close() {
      void admin?.close()
      admin = undefined
    },
  }
}
