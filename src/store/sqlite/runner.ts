/**
 * Shared statements (store/sql/) run on a bun:sqlite connection, prepared once
 * per text and connection: the statements whose text depends on the request
 * (the console's searches) take a few texts each, so the cache stays small.
 */
import type { Database } from 'bun:sqlite'
import { forSqlite } from '../sql/dialect.ts'
import type { Runner } from '../sql/stats-store.ts'
import type { Prepared } from './shared-sql.ts'
import type { Param, Row } from '../sql/values.ts'

export function sqliteRunner(c: Database): Runner {
  const cache = new Map<string, Prepared>()
  const prepared = (text: string): Prepared => {
    let p = cache.get(text)
    if (p === undefined) {
      p = c.prepare<Row, Param[]>(forSqlite(text))
      cache.set(text, p)
    }
    return p
  }
  return {
    all: async (text, params) => prepared(text).all(...params),
    run: async (text, params) => {
      prepared(text).run(...params)
    },
  }
}
