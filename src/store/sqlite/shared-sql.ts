/**
 * The shared statements of store/sql/ as bun:sqlite prepared statements:
 * each text's placeholders are rewritten once (store/sql/dialect.ts
 * forSqlite), when its store is built, and never per call.
 */
import type { Database, Statement } from 'bun:sqlite'
import { forSqlite } from '../sql/dialect.ts'
import type { Param, Row } from '../sql/values.ts'

export type Prepared = Statement<Row, Param[]>

export function prepareShared<K extends string>(c: Database, texts: Readonly<Record<K, string>>): Record<K, Prepared> {
  const out = {} as Record<K, Prepared>
  for (const name of Object.keys(texts) as K[]) out[name] = c.prepare<Row, Param[]>(forSqlite(texts[name]))
  return out
}
