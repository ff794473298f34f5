/**
 * The workflows page's aggregate off the request thread (docs/console.md#performance):
 * on SQLite it runs on a worker thread with a read connection of its own,
 * and answers what the request thread would; while it reads, requests go on.
 * A read that fails, a thread that dies or one that hangs past the bound
 * answers a clear error (the page: the console's 500), and the next read
 * starts a new thread. PostgreSQL reads in-process (its reads never hold up
 * the event loop).
 */
import { expect, test } from 'bun:test'
import { renameSync } from 'node:fs'
import { consoleReadWorkerSpecifier, startConsoleReader } from '../../src/store/sqlite/console-reader.ts'
import { consoleOf } from '../kit/console.ts'
import { DAY, harnessPerTest, type Harness, HOUR, sqliteClient, sqliteOnly } from '../kit/harness.ts'

const start = harnessPerTest({ credits: 100, config: { fraud: { mode: 'off' }, limits: { recipient_per_minute: 100, recipient_per_hour: 100 } } })
const postgres = process.env.OTPD_TEST_DATABASE === 'postgres'
const fixture = (name: string) => new URL(`../kit/fixtures/${name}`, import.meta.url).href
const WS = [{ channel: 'sms' }, { channel: 'voice' }]

/** Two workflow sends. */
async function seed(h: Harness): Promise<void> {
  for (const recipient of ['+14155550100', '+14155550101']) expect((await h.send({ recipient, workflow: WS })).status).toBe(200)
  await h.server.storage.settled()
}

test("the engine's off-thread read answers what the request thread reads: SQLite on its worker, PostgreSQL none", async () => {
  const h = await start()
  const reads = h.server.engine.consoleReads()
  if (postgres) return expect(reads).toBeNull()
  expect(reads).not.toBeNull()
  await seed(h)
  const v = (await h.sql('SELECT id FROM verifications ORDER BY seq DESC LIMIT 1'))[0]!.id
  expect((await h.verify({ verification_id: v, code: h.delivery.lastCode() })).json.verified).toBe(true)
  const now = h.clock.now()
  const here = await h.server.storage.read((r) => r.stats.workflowSteps(now - HOUR, now + 1, null))
  const there = await reads!.workflowSteps(now - HOUR, now + 1, null)
  expect(there).toEqual(here)
  expect(there.reduce((n, r) => n + r.approved, 0)).toBe(1)
  // Stopped with the background work; a later read starts another thread.
  await h.server.engine.stopBackground()
  expect(await reads!.workflowSteps(now - HOUR, now + 1, 1)).toEqual(here)
})

sqliteOnly('faults of the read thread', () => {
  test('a thread that dies fails its read with the reason, and the next read starts a new one', async () => {
    const h = await start()
    await seed(h)
    const specs = [fixture('console-read-dies.ts')]
    const reads = startConsoleReader(h.dbPath, 1000, { specifier: () => specs.shift() ?? consoleReadWorkerSpecifier() })
    try {
      await expect(reads.workflowSteps(0, h.clock.now() + 1, null)).rejects.toThrow('the console read worker stopped')
      expect((await reads.workflowSteps(0, h.clock.now() + 1, null)).reduce((n, r) => n + r.started, 0)).toBe(2)
    } finally {
      await reads.stop()
    }
  })

  test('a thread that does not answer within the bound is ended: its read fails, and the next read starts a new one', async () => {
    const h = await start()
    await seed(h)
    const specs = [fixture('console-read-hangs.ts')]
    const reads = startConsoleReader(h.dbPath, 1000, { timeoutMs: 300, specifier: () => specs.shift() ?? consoleReadWorkerSpecifier() })
    try {
      const started = performance.now()
      await expect(reads.workflowSteps(0, h.clock.now() + 1, null)).rejects.toThrow('the console read worker did not answer within 300 ms')
      expect(performance.now() - started).toBeGreaterThanOrEqual(290)
      expect((await reads.workflowSteps(0, h.clock.now() + 1, null)).reduce((n, r) => n + r.started, 0)).toBe(2)
    } finally {
      await reads.stop()
    }
  })

  test("a read the database refuses: the page answers the console's 500, the cause logged, and the next request answers", async () => {
    const h = await start()
    await seed(h)
    const away = `${h.dbPath}.away`
    // The server keeps its open connections; the read thread, started by this first request, finds no file to open.
    renameSync(h.dbPath, away)
    const failed = await consoleOf(h).get('/console/api/workflows?period=1h')
    renameSync(away, h.dbPath)
    expect(failed.status).toBe(500)
    expect(failed.json).toEqual({ error: 'Internal server error', request_id: expect.any(String) })
    expect(h.logs.some((l) => l.includes('the console read failed: unable to open database file') && l.includes(failed.json.request_id))).toBe(true)
    const again = await consoleOf(h).get('/console/api/workflows?period=1h')
    expect(again.status).toBe(200)
    expect(again.json.totals.started).toBe(2)
  })
})

/** `n` copies of the workflow send `seq` (and its steps) spread over the last 29 days, numbered after every row. */
function copySends(h: Harness, seq: number, n: number): void {
  const db = sqliteClient(h.server)
  const columns = (db.query('PRAGMA table_info(verifications)').all() as { name: string }[]).map((c) => c.name)
  const copied = columns.map((c) =>
    c === 'id' ? `t.id || '-' || n.i` : c === 'seq' ? 'm.top + n.i' : c === 'created_at' ? `t.created_at - n.i * ${Math.floor((29 * DAY) / n)}` : `t.${c}`,
  )
  const n_ = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${n})`
  db.run('BEGIN')
  db.run(`CREATE TEMP TABLE top AS SELECT max(seq) AS top FROM verifications`)
  db.run(`${n_} INSERT INTO verifications (${columns.join(', ')}) SELECT ${copied.join(', ')} FROM n, verifications t, temp.top m WHERE t.seq = ${seq}`)
  db.run(`INSERT INTO verification_steps SELECT v.seq, s.step, s.channel, s.recipient_mask, s.channel_timeout, s.sealed, s.provider, s.delivery,
    s.started_at, s.ended_at, s.end_reason, s.due_at FROM verifications v, temp.top m, verification_steps s WHERE v.seq > m.top AND s.verification_seq = ${seq}`)
  db.run('DROP TABLE temp.top')
  db.run('COMMIT')
}

sqliteOnly('the request thread is not held', () => {
  test('while the 30-day read of many workflow sends runs, health and verify requests answer without waiting for it', async () => {
    const h = await start()
    await seed(h)
    const [first] = await h.sql('SELECT seq FROM verifications ORDER BY seq LIMIT 1')
    copySends(h, Number(first!.seq), 200_000)
    const v = (await h.send({ recipient: '+14155550199' })).json.verification_id
    // Over a real port, as requests come: each answer is I/O, so a read on this thread would hold them all.
    const base = h.listen()
    const verify = () =>
      fetch(`${base}/api/v1/verify`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ verification_id: v, code: '000000' }),
      })
    const began = performance.now()
    let done = 0
    const page = consoleOf(h)
      .get('/console/api/workflows?period=30d')
      .then((r) => {
        done = performance.now()
        return r
      })
    const answered: number[] = []
    while (done === 0 && performance.now() - began < 30_000) {
      // A write (a wrong code counts an attempt, until the code is used up) and a read, one after the other.
      const r = answered.length % 2 ? await fetch(`${base}/healthz`) : await verify()
      await r.arrayBuffer()
      expect(r.status).toBeLessThan(500)
      if (done === 0) answered.push(performance.now())
    }
    const r = await page
    expect(r.status).toBe(200)
    expect(r.json.totals.started).toBe(200_002)
    const took = done - began
    // The read is long enough to show; on the request thread it would stop every request for all of it.
    expect(took).toBeGreaterThanOrEqual(100)
    // From the request to each answer while it ran, and from the last one to the page's: none waited for the read.
    const times = [began, ...answered, done]
    const gaps = times.slice(1).map((t, i) => t - times[i]!)
    expect(answered.length).toBeGreaterThanOrEqual(50)
    expect(Math.max(...gaps)).toBeLessThan(took / 2)
  }, 60_000)
})
