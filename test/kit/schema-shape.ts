/**
 * A database schema as the parity test compares it (test/store/schema-parity.test.ts):
 * per table, its columns with their nullability, its primary key, and its
 * indexes (unique or not, their columns, partial or not). Read from a drizzle
 * schema module, or from a migrated database's own catalog.
 */
import type { Database } from 'bun:sqlite'
import type { SQL } from 'bun'
import { is } from 'drizzle-orm'
import { getTableConfig as pgTableConfig, PgTable } from 'drizzle-orm/pg-core'
import { getTableConfig as sqliteTableConfig, SQLiteTable } from 'drizzle-orm/sqlite-core'

export interface IndexShape {
  unique: boolean
  columns: string[]
  partial: boolean
}

export interface TableShape {
  /** Column name -> NOT NULL. */
  columns: Record<string, boolean>
  primaryKey: string[]
  indexes: Record<string, IndexShape>
}

export type SchemaShape = Record<string, TableShape>

interface DrizzleColumn {
  name: string
  notNull: boolean
  primary: boolean
  isUnique: boolean
  uniqueName?: string
}

interface DrizzleConfig {
  name: string
  columns: DrizzleColumn[]
  primaryKeys: { columns: { name: string }[] }[]
  indexes: { config: { name: string; unique?: boolean; where?: unknown; columns: { name?: string }[] } }[]
}

/** The tables a drizzle schema module declares; a column's `.unique()` counts as the unique index drizzle-kit names `<table>_<column>_unique`. */
export function drizzleShape(schema: Record<string, unknown>, engine: 'sqlite' | 'pg'): SchemaShape {
  const shape: SchemaShape = {}
  for (const value of Object.values(schema)) {
    let cfg: DrizzleConfig
    if (engine === 'sqlite' && is(value, SQLiteTable)) cfg = sqliteTableConfig(value) as unknown as DrizzleConfig
    else if (engine === 'pg' && is(value, PgTable)) cfg = pgTableConfig(value) as unknown as DrizzleConfig
    else continue
    const indexes: Record<string, IndexShape> = {}
    for (const c of cfg.columns) if (c.isUnique) indexes[c.uniqueName ?? `${cfg.name}_${c.name}_unique`] = { unique: true, columns: [c.name], partial: false }
    for (const i of cfg.indexes) {
      indexes[i.config.name] = {
        unique: i.config.unique === true,
        columns: i.config.columns.map((c) => c.name ?? '<expression>'),
        partial: i.config.where !== undefined,
      }
    }
    const single = cfg.columns.filter((c) => c.primary).map((c) => c.name)
    shape[cfg.name] = {
      columns: Object.fromEntries(cfg.columns.map((c) => [c.name, c.notNull])),
      primaryKey: single.length > 0 ? single : (cfg.primaryKeys[0]?.columns.map((c) => c.name) ?? []),
      indexes,
    }
  }
  return shape
}

/** Tables of drizzle's and SQLite's own bookkeeping, not of otpd's schema. */
const SQLITE_BOOKKEEPING = new Set(['__drizzle_migrations', 'sqlite_sequence'])

/** The schema a migrated SQLite database holds (its primary keys' own indexes left out, as drizzle declares none). */
export function sqliteCatalogShape(db: Database): SchemaShape {
  const shape: SchemaShape = {}
  const tables = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'").all()
  for (const { name } of tables.filter((t) => !SQLITE_BOOKKEEPING.has(t.name))) {
    const columns = db.query<{ name: string; notnull: number; pk: number }, []>(`PRAGMA table_info('${name}')`).all()
    const indexes: Record<string, IndexShape> = {}
    for (const i of db.query<{ name: string; unique: number; origin: string; partial: number }, []>(`PRAGMA index_list('${name}')`).all()) {
      if (i.origin === 'pk') continue
      const cols = db.query<{ name: string | null }, []>(`PRAGMA index_info('${i.name}')`).all()
      indexes[i.name] = { unique: i.unique === 1, columns: cols.map((c) => c.name ?? '<expression>'), partial: i.partial === 1 }
    }
    shape[name] = {
      columns: Object.fromEntries(columns.map((c) => [c.name, c.notnull === 1])),
      primaryKey: columns
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => c.name),
      indexes,
    }
  }
  return shape
}

/** The schema a migrated PostgreSQL database holds in `public` (primary keys' own indexes left out, as in drizzleShape). */
export async function pgCatalogShape(sql: SQL): Promise<SchemaShape> {
  const shape: SchemaShape = {}
  const columns = (await sql.unsafe(
    "SELECT table_name, column_name, is_nullable FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position",
  )) as { table_name: string; column_name: string; is_nullable: string }[]
  for (const c of columns) {
    shape[c.table_name] ??= { columns: {}, primaryKey: [], indexes: {} }
    shape[c.table_name]!.columns[c.column_name] = c.is_nullable === 'NO'
  }
  const indexes = (await sql.unsafe(`
    SELECT t.relname AS table_name, i.relname AS index_name, x.indisprimary AS primary, x.indisunique AS unique, x.indpred IS NOT NULL AS partial,
           array(SELECT coalesce(a.attname, '<expression>') FROM unnest(x.indkey) WITH ORDINALITY AS k(attnum, n)
                 LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.n) AS columns
    FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
    JOIN pg_namespace s ON s.oid = t.relnamespace WHERE s.nspname = 'public'`)) as {
    table_name: string
    index_name: string
    primary: boolean
    unique: boolean
    partial: boolean
    columns: string[]
  }[]
  for (const i of indexes) {
    const table = shape[i.table_name]!
    if (i.primary) table.primaryKey = i.columns
    else table.indexes[i.index_name] = { unique: i.unique, columns: i.columns, partial: i.partial }
  }
  return shape
}

/**
 * Every way two shapes differ, one line each, sorted: `table t: only in A`,
 * `t.c: only in A`, `t.c: NOT NULL only in A`, `t primary key: ...`,
 * `t index i: only in A` or `t index i: differs`.
 */
export function shapeDifferences(a: SchemaShape, b: SchemaShape, [nameA, nameB]: [string, string]): string[] {
  const out: string[] = []
  const only = (x: string[], y: string[]) => x.filter((k) => !y.includes(k))
  const [ta, tb] = [Object.keys(a), Object.keys(b)]
  for (const t of only(ta, tb)) out.push(`table ${t}: only in ${nameA}`)
  for (const t of only(tb, ta)) out.push(`table ${t}: only in ${nameB}`)
  for (const t of ta.filter((k) => k in b)) {
    const [x, y] = [a[t]!, b[t]!]
    const [ca, cb] = [Object.keys(x.columns), Object.keys(y.columns)]
    for (const c of only(ca, cb)) out.push(`${t}.${c}: only in ${nameA}`)
    for (const c of only(cb, ca)) out.push(`${t}.${c}: only in ${nameB}`)
    for (const c of ca.filter((k) => k in y.columns && x.columns[k] !== y.columns[k])) out.push(`${t}.${c}: NOT NULL only in ${x.columns[c] ? nameA : nameB}`)
    if (x.primaryKey.join() !== y.primaryKey.join()) out.push(`${t} primary key: (${x.primaryKey}) in ${nameA}, (${y.primaryKey}) in ${nameB}`)
    const [ia, ib] = [Object.keys(x.indexes), Object.keys(y.indexes)]
    for (const i of only(ia, ib)) out.push(`${t} index ${i}: only in ${nameA}`)
    for (const i of only(ib, ia)) out.push(`${t} index ${i}: only in ${nameB}`)
    for (const i of ia.filter((k) => k in y.indexes && JSON.stringify(x.indexes[k]) !== JSON.stringify(y.indexes[k]))) out.push(`${t} index ${i}: differs`)
  }
  return out.sort()
}
