/**
 * WAL checkpoints on a worker thread (store/sqlite/checkpointer.ts): the server's
 * connection no longer checkpoints inside its commits, and the worker copies
 * the WAL back into the database file on its own.
 */
import { expect } from 'bun:test'
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { BACKSTOP_PAGES, startCheckpointer, type Checkpointer, type CheckpointReport } from '../../src/store/sqlite/checkpointer.ts'
import { openDatabase, openReader, type Db } from '../../src/store/sqlite/db.ts'
import { SqliteStorage } from '../../src/store/sqlite/storage.ts'
import { afterTest, closeAfterTest, tempDir } from '../kit/cleanup.ts'
import { testSqliteOnly } from '../kit/harness.ts'

/** The server's connection and the worker of the current test. */
let db: Db
let cp: Checkpointer | undefined

/** `otpd.db` in a new temp dir, removed after the test. */
const newPath = () => join(tempDir('otpd-ckpt-'), 'otpd.db')

/** The server's connection to `path`, closed after the test (closing it first is harmless). */
function openServerDb(path: string, opts: Omit<Parameters<typeof openDatabase>[0], 'path'> = {}): Db {
  const opened = openDatabase({ path, ...opts })
  closeAfterTest(opened.$client)
  return opened
}

/** startCheckpointer, the worker stopped after the test. */
function startWorker(...args: Parameters<typeof startCheckpointer>): Checkpointer {
  const started = startCheckpointer(...args)
  afterTest(() => started.stop())
  return started
}

/** The server's storage as app/index.ts builds it, writing only while holding the worker's turn. */
function storageOf(path: string, checkpointer: Checkpointer): SqliteStorage {
  const reader = openReader(db, path)
  closeAfterTest(reader.$client)
  const storage = new SqliteStorage(db, reader, {
    busyTimeoutMs: 5000,
    onFatal: (err) => {
      throw err
    },
  })
  storage.shareWritesWith(checkpointer.turn)
  return storage
}

testSqliteOnly('the worker checkpoints what the server wrote; the server connection only keeps a far backstop', async () => {
  const path = newPath()
  db = openServerDb(path)
  const errors: string[] = []
  cp = startWorker(db, path, 5000, (e) => errors.push(e))
  expect(db.$client.query<{ wal_autocheckpoint: number }, []>('PRAGMA wal_autocheckpoint').get()!.wal_autocheckpoint).toBe(BACKSTOP_PAGES)
  db.$client.run('CREATE TABLE t (x TEXT)')
  for (let i = 0; i < 200; i++) db.$client.run('INSERT INTO t VALUES (?)', [crypto.randomUUID().repeat(20)])
  // The first report may predate the writes; the one after it sees them.
  await cp.next()
  const r = await cp.next()
  expect(r.ok).toBe(true)
  expect(r.log).toBeGreaterThan(0)
  expect(r.checkpointed).toBe(r.log)
  expect(errors).toEqual([])
})

testSqliteOnly('a worker that cannot open the database reports it', async () => {
  const dir = tempDir('otpd-ckpt-')
  db = openServerDb(join(dir, 'otpd.db'))
  const errors: string[] = []
  cp = startWorker(db, join(dir, 'missing', 'nope.db'), 0, (e) => errors.push(e))
  for (let i = 0; i < 100 && errors.length === 0; i++) await Bun.sleep(20)
  expect(errors.length).toBeGreaterThan(0)
})

testSqliteOnly('stop() resolves once the worker has closed its connection, so the server closing last removes the WAL', async () => {
  const path = newPath()
  db = openServerDb(path)
  const started = startCheckpointer(db, path, 5000, () => {})
  db.$client.run('CREATE TABLE t (x TEXT)')
  for (let i = 0; i < 200; i++) db.$client.run('INSERT INTO t VALUES (?)', [crypto.randomUUID().repeat(20)])
  await started.next()
  await started.stop()
  db.$client.close()
  expect(existsSync(`${path}-wal`)).toBe(false)
  db = openServerDb(path)
  expect(db.$client.query<{ n: number }, []>('SELECT count(*) AS n FROM t').get()!.n).toBe(200)
})

testSqliteOnly('under writes with no pause between batches the WAL still restarts: the worker takes the write turn for its last pass', async () => {
  const path = newPath()
  db = openServerDb(path, { synchronous: 'NORMAL' })
  const restartFrames = 400
  // Truncation as eager as it can be (one quiet pass, a small WAL counts as
  // small from 64 KiB): never while these writes go on.
  cp = startWorker(
    db,
    path,
    5000,
    (e) => {
      throw new Error(e)
    },
    { restartFrames, everyMs: 100, idleMs: 100, keepWalBytes: 64 * 1024 },
  )
  const storage = storageOf(path, cp)
  db.$client.run('CREATE TABLE t (x BLOB)')
  const insert = db.$client.prepare('INSERT INTO t VALUES (randomblob(400))')
  // A saturated server: a batch of about a page in every turn of the event
  // loop, turns about 0.1 ms apart and busy in between (never idle, so a
  // checkpoint can only reach the WAL's end by taking the turn), for 2.5 s.
  // Measured: the WAL file restarts 5-10 times and peaks at 16-18 MB (up to
  // 23 MB with both cores busy elsewhere); with the turn ignored, it never
  // restarts and holds everything written.
  let writing = true
  let written = 0
  const loop = () => {
    if (!writing) return
    for (let i = 0; i < 8; i++) void storage.write(async () => insert.run()).then(() => written++)
    const until = performance.now() + 0.1
    while (performance.now() < until) {}
    setImmediate(loop)
  }
  loop()
  const reports: CheckpointReport[] = []
  let largestWal = 0
  // The WAL header's checkpoint sequence number (bytes 12-15), which SQLite
  // increments each time the WAL starts over: restarts seen in the file itself.
  const walFd = openSync(`${path}-wal`, 'r')
  const header = Buffer.alloc(16)
  const ckptSeq = () => (readSync(walFd, header, 0, 16, 0) === 16 ? header.readUInt32BE(12) : -1)
  const firstSeq = ckptSeq()
  let lastSeq = firstSeq
  const until = Date.now() + 2_500
  while (Date.now() < until) {
    reports.push(await cp.next())
    largestWal = Math.max(largestWal, statSync(`${path}-wal`).size)
    lastSeq = ckptSeq()
  }
  closeSync(walFd)
  writing = false
  const restarts = reports.filter((r) => r.restarted)
  expect(written).toBeGreaterThan(10_000)
  expect(restarts.length).toBeGreaterThanOrEqual(2)
  // `restarted` alone proves nothing (the worker reports it from its own
  // snapshot of the WAL): the file must have started over, more than once.
  expect(firstSeq).toBeGreaterThanOrEqual(0)
  expect(lastSeq - firstSeq).toBeGreaterThanOrEqual(2)
  // At least this much went through the WAL (the rows alone; each batch's
  // page carries more). Restarted, the file is written over from its start
  // and holds a part of it; never restarted, it holds all of it, up to the
  // backstop.
  const bytesWritten = written * 400
  expect(largestWal).toBeLessThan(bytesWritten * 0.8)
  for (const r of restarts) expect(r.held_ms).toBeGreaterThanOrEqual(0)
  expect(reports.filter((r) => r.truncated !== undefined)).toEqual([])
})

/** Sizes of the truncation tests: a 2 MB burst against a WAL kept up to 256 KiB. */
const KEEP_WAL_BYTES = 256 * 1024
const BURST_ROWS = 640

/**
 * A server connection sharing its write turn with a worker that passes every
 * 50 ms and truncates after `idleMs`; then a burst of about 2 MB (3 KB rows)
 * in one batch, all of it in use in the WAL until a next write restarts it.
 */
async function afterBurst(idleMs: number) {
  const path = newPath()
  db = openServerDb(path, { synchronous: 'NORMAL' })
  // The worker's busy timeout is 5 s: the truncation must not use it.
  cp = startWorker(
    db,
    path,
    5000,
    (e) => {
      throw new Error(e)
    },
    { everyMs: 50, idleMs, keepWalBytes: KEEP_WAL_BYTES },
  )
  const storage = storageOf(path, cp)
  db.$client.run('CREATE TABLE t (x BLOB)')
  const insert = db.$client.prepare('INSERT INTO t VALUES (randomblob(3000))')
  const write = () => storage.write(async () => insert.run())
  await Promise.all(Array.from({ length: BURST_ROWS }, write))
  const walSize = () => statSync(`${path}-wal`).size
  expect(walSize()).toBeGreaterThan(2_000_000)
  return { path, write, walSize, rows: () => db.$client.query<{ n: number }, []>('SELECT count(*) AS n FROM t').get()!.n }
}

/** The worker's next report about a truncation (done or given up), within 100 passes. */
async function nextTruncation(): Promise<CheckpointReport | undefined> {
  for (let i = 0; i < 100; i++) {
    const r = await cp!.next()
    if (r.truncated !== undefined) return r
  }
  return undefined
}

testSqliteOnly('once writes stop, the worker truncates a large WAL file; the rows stay and writes go on after it', async () => {
  const idleMs = 300
  const { path, write, walSize, rows } = await afterBurst(idleMs)
  // The burst's frames stay in use while nothing writes: only the stop of the writes counts as quiet.
  const lastWrite = performance.now()
  const truncated = await nextTruncation()
  const quietFor = performance.now() - lastWrite
  expect(truncated).toMatchObject({ ok: true, truncated: true, busy: 0, log: 0, checkpointed: 0 })
  expect(truncated!.held_ms).toBeGreaterThanOrEqual(0)
  // Not before writes had stopped for idleMs (give or take the timer's few ms).
  expect(quietFor).toBeGreaterThanOrEqual(idleMs - 5)
  expect(walSize()).toBe(0)
  // Every row is in the database file, read by a connection of its own.
  const reader = openDatabase({ path })
  expect(reader.$client.query<{ n: number }, []>('SELECT count(*) AS n FROM t').get()!.n).toBe(BURST_ROWS)
  reader.$client.close()
  // The server writes on into the emptied file; a WAL under keepWalBytes is left alone.
  await write()
  expect(walSize()).toBeGreaterThan(0)
  expect(walSize()).toBeLessThan(KEEP_WAL_BYTES)
  const after = walSize()
  const later: CheckpointReport[] = []
  const until = performance.now() + idleMs * 3
  while (performance.now() < until) later.push(await cp!.next())
  expect(later.filter((r) => r.truncated !== undefined)).toEqual([])
  expect(walSize()).toBe(after)
  expect(rows()).toBe(BURST_ROWS + 1)
})

testSqliteOnly('a WAL file left large by a burst is truncated while writes go on at a pace that needs a small one', async () => {
  const { write, walSize, rows } = await afterBurst(300)
  // Then a row every 20 ms: a commit between any two passes, so the writes
  // never stop, and each pass finds a few frames in use.
  let trickled = 0
  const trickle = setInterval(() => void write().then(() => trickled++), 20)
  let truncated: CheckpointReport | undefined
  try {
    truncated = await nextTruncation()
  } finally {
    clearInterval(trickle)
  }
  expect(truncated).toMatchObject({ ok: true, truncated: true, busy: 0 })
  expect(trickled).toBeGreaterThan(10)
  // It grows back only to what the trickle uses.
  await write()
  expect(walSize()).toBeLessThanOrEqual(KEEP_WAL_BYTES)
  await Bun.sleep(50)
  expect(rows()).toBe(BURST_ROWS + trickled + 1)
})

testSqliteOnly('a reader of another connection that still uses the WAL makes the truncation give way at once; it comes after the reader ends', async () => {
  const { path, walSize } = await afterBurst(200)
  // Begun before the worker copies those frames: its snapshot is in the WAL.
  const reader = openDatabase({ path })
  reader.$client.run('BEGIN')
  expect(reader.$client.query<{ n: number }, []>('SELECT count(*) AS n FROM t').get()!.n).toBe(BURST_ROWS)
  let tried: CheckpointReport | undefined
  try {
    tried = await nextTruncation()
  } finally {
    reader.$client.run('COMMIT')
  }
  expect(tried).toMatchObject({ ok: true, truncated: false, busy: 1 })
  expect(tried!.held_ms).toBeLessThan(100)
  expect(walSize()).toBeGreaterThan(KEEP_WAL_BYTES)
  const done = await nextTruncation()
  reader.$client.close()
  expect(done).toMatchObject({ ok: true, truncated: true })
  expect(walSize()).toBe(0)
})
