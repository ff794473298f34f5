/**
 * The console rollup's reads on a thread of their own (rollup-planner.ts
 * starts it): each batch's plan (otp/rollup.ts planBatch) is read here, in one
 * read transaction of this thread's own connection, so that the recounts,
 * which grow with the busiest minute, never run on the request thread. The
 * server writes the plan back, in its own batch, only if the cursor has not
 * moved (otp/rollup.ts Rollup.runOnce).
 *
 * A WAL reader never blocks the writer, nor is it blocked by it.
 */
import { Database } from 'bun:sqlite'
import { Hasher } from '../../lib/secrets.ts'
import { VerificationIds } from '../../lib/verification-id.ts'
import { planBatch, type PlanOptions } from '../../otp/rollup.ts'
import { SQLITE } from '../sql/dialect.ts'
import { SqlStatsStore } from '../sql/stats-store.ts'
import { sqliteRunner } from './runner.ts'

declare const self: Worker

export interface RollupWorkerOpen {
  type: 'open'
  path: string
  /** The server secret, for the verification ids' row numbers (lib/verification-id.ts); it stays in this process. */
  secret: Uint8Array
  busyTimeoutMs: number
}
export interface RollupWorkerPlan {
  type: 'plan'
  id: number
  options: PlanOptions
}

let params: RollupWorkerOpen | undefined
let opened: { db: Database; plan: (o: PlanOptions) => ReturnType<typeof planBatch> } | undefined

/** The connection, opened on the first plan after `open` (and again after a failed try: a database not there yet, a permission fixed). */
function connection(): NonNullable<typeof opened> {
  if (opened) return opened
  if (!params) throw new Error('the rollup worker was given no database')
  const db = new Database(params.path, { readonly: true, strict: true })
  try {
    db.run(`PRAGMA busy_timeout = ${Math.trunc(params.busyTimeoutMs)}`)
    db.run('PRAGMA temp_store = MEMORY')
    const stats = { rollups: new SqlStatsStore(sqliteRunner(db), SQLITE) }
    const ids = new VerificationIds(new Hasher(params.secret))
    const begin = db.prepare('BEGIN')
    const end = db.prepare('COMMIT')
    opened = {
      db,
      plan: async (o) => {
        begin.run()
        try {
          return await planBatch(stats, o, (id) => ids.seqOf(id))
        } finally {
          end.run()
        }
      },
    }
    return opened
  } catch (err) {
    db.close()
    throw err
  }
}

self.onmessage = async (event: MessageEvent<RollupWorkerOpen | RollupWorkerPlan | 'stop'>) => {
  const m = event.data
  if (m === 'stop') {
    opened?.db.close()
    process.exit(0)
  }
  if (m.type === 'open') {
    params = m
    return
  }
  try {
    postMessage({ id: m.id, ok: true, plan: await connection().plan(m.options) })
  } catch (err) {
    postMessage({ id: m.id, ok: false, error: err instanceof Error ? err.message : String(err) })
  }
}
