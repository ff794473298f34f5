/**
 * The console rollup's reads on a thread of their own (docs/console.md#performance):
 * on SQLite the engine plans each batch on a worker thread with its own read
 * connection, and that plan is the one the request thread would have made;
 * the rollup written from it is exact. PostgreSQL plans in-process (its reads
 * never hold up the event loop). A database the worker cannot open yet fails
 * each plan, not the thread; a run takes at most ROLLUP_CPU_SHARE of a core.
 */
import { Database } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROLLUP_CPU_SHARE, startRollup } from '../../src/app/console.ts'
import { createLogger } from '../../src/lib/logger.ts'
import { VerificationIds } from '../../src/lib/verification-id.ts'
import { planBatch, type Rollup } from '../../src/otp/rollup.ts'
import { applyMigrations } from '../../src/store/sqlite/db.ts'
import { startRollupPlanner } from '../../src/store/sqlite/rollup-planner.ts'
import { SPAN } from '../../src/otp/ports/stats.ts'
import { harnessPerTest } from '../kit/harness.ts'
import { waitFor } from '../kit/wait-for.ts'

const start = harnessPerTest({ credits: 100 })
const postgres = process.env.OTPD_TEST_DATABASE === 'postgres'

test('SQLite plans the rollup on a worker thread: the same plan as on the request thread, and the counts written from it are exact', async () => {
  const h = await start()
  const planner = h.server.engine.startRollupPlanner()
  if (postgres) {
    expect(planner).toBeNull()
    return
  }
  expect(planner).not.toBeNull()
  try {
    const sent: string[] = []
    for (let i = 0; i < 6; i++) sent.push((await h.send({ channel: 'sms', recipient: `+1415555${String(1000 + i)}` })).json.verification_id)
    // One approved, one canceled: events beside the rows, so the plan maps ids to row numbers (lib/verification-id.ts) on the worker too.
    expect((await h.verify({ verification_id: sent[5], code: h.delivery.lastCode() })).status).toBe(200)
    expect((await h.call(`/api/v1/verifications/${sent[0]}/cancel`, {})).status).toBe(200)

    const ids = new VerificationIds(h.server.hasher)
    const o = { now: h.clock.now(), batch: 4, retentionDays: 7, lateRows: false }
    const here = await h.server.storage.read((r) => planBatch(r, o, (id) => ids.seqOf(id)))
    const there = await planner!.plan(o)
    expect(there).toEqual(here)
    expect(there.save.length).toBeGreaterThan(0)

    h.server.rollup.planWith(planner!.plan)
    await h.server.rollup.catchUp()
    const hour = await h.server.storage.read((r) => r.stats.rollups(SPAN.hour, h.clock.now() - SPAN.day, h.clock.now() + SPAN.hour, null))
    expect(hour.reduce((n, x) => n + x.sends, 0)).toBe(6)
    expect(hour.reduce((n, x) => n + x.approved, 0)).toBe(1)
  } finally {
    h.server.rollup.planWith(null)
    await planner?.stop()
  }
  // A stopped worker plans nothing: the rollup's next run fails, is logged, and runs again.
  await expect(planner!.plan({ now: h.clock.now(), batch: 4, retentionDays: 7, lateRows: false })).rejects.toThrow('the rollup worker stopped')
})

test('a worker whose database cannot be opened yet refuses each plan with the reason, and plans once it can', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'otpd-rollup-worker-'))
  const path = join(dir, 'otpd.db')
  const planner = startRollupPlanner(path, new Uint8Array(32), 1000)
  try {
    const o = { now: Date.now(), batch: 10, retentionDays: 7, lateRows: false }
    await expect(planner.plan(o)).rejects.toThrow('unable to open database file')
    const db = new Database(path)
    applyMigrations(db)
    db.close()
    // The same thread, tried again on the next plan: nothing to count yet, the cursor starts.
    const plan = await planner.plan(o)
    expect(plan.prev).toBeNull()
    expect(plan.save).toEqual([])
  } finally {
    await planner.stop()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a rollup run takes at most ROLLUP_CPU_SHARE of a core: after a run of t ms the next waits t / share - t', async () => {
  const RUN_MS = 60
  const starts: number[] = []
  const slow = {
    planWith: () => {},
    catchUp: async () => {
      starts.push(performance.now())
      await Bun.sleep(RUN_MS)
      return 0
    },
  } as unknown as Rollup
  const stop = startRollup(slow, createLogger({ write: () => {} }), null, 1)
  await waitFor(() => starts.length >= 3, { what: 'three rollup runs', ms: 5000 })
  await stop()
  expect(starts.length).toBeGreaterThanOrEqual(3)
  // With the 1 ms interval alone the runs would follow each other at once.
  for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(RUN_MS / ROLLUP_CPU_SHARE - 20)
})
