/**
 * The WAL fsync worker (store/sqlite/wal-sync.ts): sync() resolves after an fsync
 * that started after the call; calls made while one runs share the next; a
 * worker that cannot sync makes them fail rather than answer undurably.
 */
import { expect } from 'bun:test'
import { join } from 'node:path'
import { openDatabase, type Db } from '../../src/store/sqlite/db.ts'
import { covers, startWalSync, type WalSync } from '../../src/store/sqlite/wal-sync.ts'
import { afterTest, closeAfterTest, tempDir } from '../kit/cleanup.ts'
import { testSqliteOnly } from '../kit/harness.ts'

/** A connection to `path`, closed after the test. */
function openDb(path: string): Db {
  const db = openDatabase({ path })
  closeAfterTest(db.$client)
  return db
}

/** startWalSync, the worker stopped after the test. */
function startSync(...args: Parameters<typeof startWalSync>): WalSync {
  const ws = startWalSync(...args)
  afterTest(() => ws.stop())
  return ws
}

testSqliteOnly('sync resolves; many calls at once are served by one or two fsyncs', async () => {
  const dir = tempDir('otpd-walsync-')
  const path = join(dir, 'otpd.db')
  const db = openDb(path)
  const ws = startSync(path, (e) => {
    throw new Error(e)
  })
  await ws.sync()
  db.$client.run('CREATE TABLE t (x)')
  const all = await Promise.all(Array.from({ length: 50 }, () => ws.sync()))
  expect(all).toHaveLength(50)
})

testSqliteOnly('every flush reports how long it took; calls one after another get one flush each', async () => {
  const dir = tempDir('otpd-walsync-')
  const path = join(dir, 'otpd.db')
  const db = openDb(path)
  db.$client.run('CREATE TABLE t (x)')
  const took: number[] = []
  const ws = startSync(
    path,
    (e) => {
      throw new Error(e)
    },
    (ms) => took.push(ms),
  )
  for (let i = 0; i < 5; i++) {
    db.$client.run('INSERT INTO t VALUES (1)')
    await ws.sync()
    expect(took).toHaveLength(i + 1)
  }
  for (const ms of took) {
    expect(Number.isFinite(ms)).toBe(true)
    expect(ms).toBeGreaterThanOrEqual(0)
  }
})

testSqliteOnly('a WAL that cannot be synced rejects the waiting calls and reports the error, not a flush time', async () => {
  const dir = tempDir('otpd-walsync-')
  const errors: string[] = []
  const took: number[] = []
  const ws = startSync(
    join(dir, 'missing.db'),
    (e) => errors.push(e),
    (ms) => took.push(ms),
  )
  await expect(ws.sync()).rejects.toThrow(/WAL fsync/)
  expect(errors.length).toBeGreaterThan(0)
  expect(took).toEqual([])
})

testSqliteOnly('a flushed generation covers the ones before it, also across the int32 wrap-around', () => {
  expect(covers(5, 5)).toBe(true)
  expect(covers(5, 3)).toBe(true)
  expect(covers(3, 5)).toBe(false)
  // 2^31 - 1 is followed by -2^31: the newer one covers the older, not the reverse.
  expect(covers(-(2 ** 31), 2 ** 31 - 1)).toBe(true)
  expect(covers(2 ** 31 - 1, -(2 ** 31))).toBe(false)
})
