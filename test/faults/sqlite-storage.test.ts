/**
 * The SQLite engine's promises under faults (store/sqlite/storage.ts), in process on
 * real database files: a lock held by another connection is waited for on
 * timers (the event loop keeps running) and ends in StorageBusyError after
 * busy_timeout_ms with nothing in force; a failed flush stops the storage;
 * reads never wait for the write lock. The same faults against real `otpd
 * serve` processes are in test/faults/*.test.ts.
 */
import { Database } from 'bun:sqlite'
import { expect } from 'bun:test'
import { join } from 'node:path'
import { openDatabase, openReader } from '../../src/store/sqlite/db.ts'
import { SqliteStorage, StorageBusyError, StorageStoppedError } from '../../src/store/sqlite/storage.ts'
import { testSqliteOnly } from '../kit/harness.ts'
import { afterTest, tempDir } from '../kit/cleanup.ts'

function open(busyTimeoutMs: number, onFatal: (err: Error) => void = () => {}) {
  const dir = tempDir('otpd-storage-')
  const path = join(dir, 'otpd.db')
  const db = openDatabase({ path })
  const reader = openReader(db, path)
  const storage = new SqliteStorage(db, reader, { busyTimeoutMs, onFatal })
  afterTest(() => {
    reader.$client.close()
    db.$client.close()
  })
  return { storage, path, db }
}

/** Another process's write lock, as the CLI or a backup tool would hold it. */
function holdLock(path: string): () => void {
  const other = new Database(path)
  other.run('BEGIN IMMEDIATE')
  other.run("INSERT INTO accounts (name, created_at) VALUES ('held', 0)")
  return () => {
    other.run('ROLLBACK')
    other.close()
  }
}

testSqliteOnly('a held write lock: the write waits on timers, the event loop runs on, and it fails after busy_timeout_ms with nothing in force', async () => {
  const { storage, path } = open(300)
  const release = holdLock(path)
  let ticks = 0
  const ticker = setInterval(() => ticks++, 10)
  const started = performance.now()
  const write = storage.write((r) => r.admin.insertAccount('waits', 1))
  const err = await write.then(
    () => null,
    (e: unknown) => e,
  )
  const waited = performance.now() - started
  clearInterval(ticker)
  release()
  expect(err).toBeInstanceOf(StorageBusyError)
  expect((err as Error).message).toContain('database.busy_timeout_ms')
  expect(waited).toBeGreaterThanOrEqual(290)
  expect(waited).toBeLessThan(1_000)
  // The event loop was free: a 10 ms timer fired many times during the wait.
  expect(ticks).toBeGreaterThan(10)
  expect(await storage.read((r) => r.admin.findAccount('waits'))).toBeUndefined()
})

testSqliteOnly('a lock released within busy_timeout_ms: the waiting write goes through', async () => {
  const { storage, path } = open(2_000)
  const release = holdLock(path)
  setTimeout(release, 150)
  const row = await storage.write((r) => r.admin.insertAccount('after-release', 1))
  expect(row.name).toBe('after-release')
  expect((await storage.read((r) => r.admin.findAccount('after-release')))?.name).toBe('after-release')
})

testSqliteOnly('reads never wait for the write lock', async () => {
  const { storage, path } = open(5_000)
  await storage.write((r) => r.admin.insertAccount('seen', 1))
  const release = holdLock(path)
  const started = performance.now()
  const row = await storage.read((r) => r.admin.findAccount('seen'))
  expect(performance.now() - started).toBeLessThan(100)
  expect(row?.name).toBe('seen')
  // The other connection's uncommitted row is not seen.
  expect(await storage.read((r) => r.admin.findAccount('held'))).toBeUndefined()
  release()
})

testSqliteOnly('concurrent reads each get their own read transaction', async () => {
  const { storage } = open(1_000)
  await storage.write((r) => r.admin.insertAccount('a', 1))
  const names = await Promise.all(Array.from({ length: 20 }, () => storage.read(async (r) => (await r.admin.findAccount('a'))?.name)))
  expect(names).toEqual(Array.from({ length: 20 }, () => 'a'))
})

testSqliteOnly('a failed flush is fatal: onFatal hears it, the batch is not acknowledged, and every later write is refused', async () => {
  const fatal: Error[] = []
  const { storage } = open(1_000, (e) => fatal.push(e))
  let flushes = 0
  storage.settleAfter(async () => {
    flushes++
    if (flushes === 2) throw new Error('EIO: i/o error, fdatasync')
  })
  expect((await storage.write((r) => r.admin.insertAccount('first', 1))).name).toBe('first')
  const second = await storage
    .write((r) => r.admin.insertAccount('second', 1))
    .then(
      () => 'acknowledged',
      (e: unknown) => e,
    )
  expect(second).toBeInstanceOf(StorageStoppedError)
  expect(fatal).toHaveLength(1)
  expect(fatal[0]!.message).toContain('fdatasync')
  const third = await storage
    .write((r) => r.admin.insertAccount('third', 1))
    .then(
      () => 'acknowledged',
      (e: unknown) => e,
    )
  expect(third).toBeInstanceOf(StorageStoppedError)
  expect(flushes).toBe(2)
})

testSqliteOnly('a write that throws is undone alone; the others of its batch commit', async () => {
  const { storage } = open(1_000)
  const results = await Promise.allSettled([
    storage.write((r) => r.admin.insertAccount('one', 1)),
    storage.write(async (r) => {
      await r.admin.insertAccount('two', 1)
      throw new Error('refused')
    }),
    storage.write((r) => r.admin.insertAccount('three', 1)),
  ])
  expect(results.map((x) => x.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
  const names = (await storage.read((r) => r.admin.listAccounts())).map((a) => a.name)
  expect(names).toEqual(['default', 'one', 'three'])
})
