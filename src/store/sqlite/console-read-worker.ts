/**
 * The console's aggregate reads on a thread of their own (console-reader.ts
 * starts it): the workflows page's one statement over the verifications and
 * their steps (docs/console.md#performance) runs here, on this thread's own
 * read connection, so that bun:sqlite's synchronous read never holds the
 * request thread. The same statement and the same row mapping as on the
 * request thread (store/sql/stats-store.ts workflowSteps).
 *
 * A WAL reader never blocks the writer, nor is it blocked by it.
 */
import { Database } from 'bun:sqlite'
import type { WorkflowStepRow } from '../../otp/ports/index.ts'
import { SQLITE } from '../sql/dialect.ts'
import { SqlStatsStore } from '../sql/stats-store.ts'
import { sqliteRunner } from './runner.ts'

declare const self: Worker

export interface ConsoleReadOpen {
  type: 'open'
  path: string
  busyTimeoutMs: number
}
export interface ConsoleReadWorkflowSteps {
  type: 'workflowSteps'
  id: number
  from: number
  to: number
  accountId: number | null
}
export type ConsoleReadAnswer = { id: number; ok: true; rows: WorkflowStepRow[] } | { id: number; ok: false; error: string }

let params: ConsoleReadOpen | undefined
let opened: { db: Database; stats: SqlStatsStore } | undefined

/** The connection, opened on the first read after `open`, and again after a failed one (a database not there yet, a permission fixed). */
function connection(): NonNullable<typeof opened> {
  if (opened) return opened
  if (!params) throw new Error('the console read worker was given no database')
  const db = new Database(params.path, { readonly: true, strict: true })
  try {
    db.run(`PRAGMA busy_timeout = ${Math.trunc(params.busyTimeoutMs)}`)
    db.run('PRAGMA temp_store = MEMORY')
    opened = { db, stats: new SqlStatsStore(sqliteRunner(db), SQLITE) }
    return opened
  } catch (err) {
    db.close()
    throw err
  }
}

function forget(): void {
  try {
    opened?.db.close()
  } catch {
    // Closing what failed: nothing more to let go of.
  }
  opened = undefined
}

self.onmessage = async (event: MessageEvent<ConsoleReadOpen | ConsoleReadWorkflowSteps | 'stop'>) => {
  const m = event.data
  if (m === 'stop') {
    forget()
    process.exit(0)
  }
  if (m.type === 'open') {
    params = m
    return
  }
  let answer: ConsoleReadAnswer
  try {
    answer = { id: m.id, ok: true, rows: await connection().stats.workflowSteps(m.from, m.to, m.accountId) }
  } catch (err) {
    // The next read starts from a fresh connection.
    forget()
    answer = { id: m.id, ok: false, error: err instanceof Error ? err.message : String(err) }
  }
  postMessage(answer)
}
