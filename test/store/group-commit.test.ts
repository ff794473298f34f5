/**
 * Group commit (store/sqlite/storage.ts): `write` calls made in one turn share one
 * IMMEDIATE transaction, run in call order, a call that throws is undone alone
 * (the batch runs again with a savepoint per call), and each settles only once
 * the commit is done. Checked on a real SQLite file, with a second connection
 * standing for another process. The calls write raw rows on the writer
 * connection: what is under test is the engine's transactions, not the
 * repositories.
 */
import { Database } from 'bun:sqlite'
import { expect } from 'bun:test'
import { join } from 'node:path'
import { openDatabase, openReader, type Db } from '../../src/store/sqlite/db.ts'
import { BATCH_MS, MAX_BATCH, SqliteStorage, StorageBusyError, StorageStoppedError } from '../../src/store/sqlite/storage.ts'
import { closeAfterTest, tempDir } from '../kit/cleanup.ts'
import { testSqliteOnly } from '../kit/harness.ts'

let db: Db
let reader: Db
let other: Database
let fatal: Error[]

/**
 * As app/core.ts openCore builds it: a writer, a reader on the same file, the busy timeout and what a failed flush does.
 * The connections are closed after the test, then the dir removed (cleanup runs newest first).
 */
function setUp(busyTimeoutMs = 5000) {
  const path = join(tempDir('otpd-group-'), 'g.db')
  db = openDatabase({ path, busyTimeoutMs })
  closeAfterTest(db.$client)
  db.$client.run('CREATE TABLE t (n INTEGER NOT NULL)')
  reader = openReader(db, path)
  closeAfterTest(reader.$client)
  other = closeAfterTest(new Database(path))
  other.run('PRAGMA busy_timeout = 5000')
  fatal = []
  return new SqliteStorage(db, reader, { busyTimeoutMs, onFatal: (err) => fatal.push(err) })
}

const insert = (n: number) => db.$client.run('INSERT INTO t (n) VALUES (?)', [n])
const rows = (c: Database = other) =>
  c
    .query<{ n: number }, []>('SELECT n FROM t ORDER BY rowid')
    .all()
    .map((r) => r.n)

testSqliteOnly('calls in one turn share one transaction, run in call order and see each other', async () => {
  const storage = setUp()
  const seenByOther: number[][] = []
  const seenInside: number[][] = []
  const results = await Promise.all(
    [1, 2, 3].map((n) =>
      storage.write(async () => {
        insert(n)
        seenInside.push(rows(db.$client))
        seenByOther.push(rows())
        return n * 10
      }),
    ),
  )
  expect(results).toEqual([10, 20, 30])
  expect(seenInside).toEqual([[1], [1, 2], [1, 2, 3]])
  // Nothing was committed while the batch ran: one transaction for the three.
  expect(seenByOther).toEqual([[], [], []])
  expect(rows()).toEqual([1, 2, 3])
})

testSqliteOnly('a promise settles only after the commit: another connection already sees the write', async () => {
  const storage = setUp()
  let visible: number[] = []
  await storage.write(async () => insert(7)).then(() => (visible = rows()))
  expect(visible).toEqual([7])
})

testSqliteOnly('a call that throws undoes only its own writes; the others land and resolve', async () => {
  const storage = setUp()
  const outcomes = await Promise.allSettled([
    storage.write(async () => insert(1)),
    storage.write(async () => {
      insert(2)
      insert(3)
      throw new Error('item 2 fails')
    }),
    storage.write(async () => {
      insert(4)
      return rows(db.$client)
    }),
  ])
  expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
  expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe('item 2 fails')
  // The third call saw the first's write and not the failed one's.
  expect((outcomes[2] as PromiseFulfilledResult<number[]>).value).toEqual([1, 4])
  expect(rows()).toEqual([1, 4])
})

testSqliteOnly('calls run once when none throws; when one throws, the others run again and end as if it had not been there', async () => {
  const storage = setUp()
  const runs = [0, 0, 0]
  await Promise.all(
    [0, 1, 2].map((i) =>
      storage.write(async () => {
        runs[i]!++
        insert(i)
      }),
    ),
  )
  expect(runs).toEqual([1, 1, 1])
  const counted = [0, 0, 0]
  const outcomes = await Promise.allSettled([
    storage.write(async () => {
      counted[0]!++
      insert(10)
      return rows(db.$client).length
    }),
    storage.write(async () => {
      counted[1]!++
      insert(11)
      throw new Error('fails every time')
    }),
    storage.write(async () => {
      counted[2]!++
      insert(12)
      return rows(db.$client).length
    }),
  ])
  // The third never ran in the first pass (the batch stopped at the throw); the first ran twice.
  expect(counted).toEqual([2, 2, 1])
  expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : 'rejected'))).toEqual([4, 'rejected', 5])
  expect(rows()).toEqual([0, 1, 2, 10, 12])
})

testSqliteOnly('when the write lock cannot be had, every call of the batch rejects and nothing lands', async () => {
  const storage = setUp(0)
  other.run('BEGIN IMMEDIATE')
  const outcomes = await Promise.allSettled([storage.write(async () => insert(1)), storage.write(async () => insert(2))])
  expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected'])
  for (const o of outcomes) expect((o as PromiseRejectedResult).reason).toBeInstanceOf(StorageBusyError)
  other.run('COMMIT')
  expect(rows()).toEqual([])
  // The storage is usable again afterwards.
  await storage.write(async () => insert(3))
  expect(rows()).toEqual([3])
})

testSqliteOnly('a batch that finds the write lock taken is tried again on a timer, and lands once it is free within the busy timeout', async () => {
  const storage = setUp(5000)
  other.run('BEGIN IMMEDIATE')
  let ticks = 0
  const ticker = setInterval(() => ticks++, 5)
  const pending = Promise.all([
    storage.write(async () => {
      insert(1)
      return 1
    }),
    storage.write(async () => {
      insert(2)
      return 2
    }),
  ])
  setTimeout(() => other.run('COMMIT'), 100)
  const results = await pending
  clearInterval(ticker)
  expect(results).toEqual([1, 2])
  expect(rows()).toEqual([1, 2])
  // The wait was on timers: the event loop kept turning meanwhile.
  expect(ticks).toBeGreaterThan(5)
})

testSqliteOnly('reads see committed state only and never wait for the write lock', async () => {
  const storage = setUp()
  await storage.write(async () => insert(1))
  other.run('BEGIN IMMEDIATE')
  other.run('INSERT INTO t (n) VALUES (2)')
  const seen = await storage.read(async () => rows(reader.$client))
  other.run('COMMIT')
  expect(seen).toEqual([1])
  expect(await storage.read(async () => rows(reader.$client))).toEqual([1, 2])
})

testSqliteOnly('more calls than one batch holds all land, in call order', async () => {
  const storage = setUp()
  const n = MAX_BATCH * 2 + 5
  const results = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      storage.write(async () => {
        insert(i)
        return i
      }),
    ),
  )
  expect(results).toEqual(Array.from({ length: n }, (_, i) => i))
  expect(rows()).toEqual(results)
})

testSqliteOnly('calls made in a later turn get a transaction of their own', async () => {
  const storage = setUp()
  await storage.write(async () => insert(1))
  let seenByOther: number[] = []
  await storage.write(async () => {
    insert(2)
    seenByOther = rows()
  })
  expect(seenByOther).toEqual([1])
})

testSqliteOnly('onStale: heard when another connection committed or a call was rolled back; not after its own commits', async () => {
  const storage = setUp()
  let heard = 0
  storage.onStale(() => heard++)
  await storage.write(async () => insert(1)) // the first look at data_version
  heard = 0
  await storage.write(async () => insert(2))
  await storage.write(async () => insert(3))
  expect(heard).toBe(0)
  other.run('INSERT INTO t (n) VALUES (4)')
  await storage.write(async () => insert(5))
  expect(heard).toBe(1)
  await storage
    .write(async () => {
      throw new Error('rolled back')
    })
    .catch(() => {})
  expect(heard).toBeGreaterThan(1)
})

testSqliteOnly('settleAfter: a batch is answered only once its durability promise resolves; a failed flush is fatal', async () => {
  const storage = setUp()
  let release!: () => void
  let fail!: (e: Error) => void
  const syncs: Promise<void>[] = []
  storage.settleAfter(() => {
    const p = new Promise<void>((resolve, reject) => {
      release = resolve
      fail = reject
    })
    syncs.push(p)
    return p
  })
  let settled = false
  const first = storage.write(async () => insert(1)).then(() => (settled = true))
  await Bun.sleep(20)
  // Committed (another connection sees it) but not yet answered.
  expect(rows()).toEqual([1])
  expect(settled).toBe(false)
  release()
  await first
  expect(settled).toBe(true)
  const second = storage.write(async () => insert(2))
  await Bun.sleep(20)
  fail(new Error('fsync failed'))
  await expect(second).rejects.toThrow('fsync failed')
  expect(syncs).toHaveLength(2)
  // What is on disk is unknown: onFatal hears it, and nothing more is acknowledged.
  expect(fatal.map((e) => e.message)).toEqual(['fsync failed'])
  await expect(second).rejects.toBeInstanceOf(StorageStoppedError)
  await expect(storage.write(async () => insert(3))).rejects.toBeInstanceOf(StorageStoppedError)
  expect(syncs).toHaveLength(2)
})

testSqliteOnly('a `first` call runs before the calls queued earlier in its turn', async () => {
  const storage = setUp()
  const bulk = [1, 2, 3].map((n) => storage.write(async () => insert(n)))
  await storage.write(async () => insert(99), { first: true })
  await Promise.all(bulk)
  expect(rows()).toEqual([99, 1, 2, 3])
})

/** Holds the thread for `ms`, as a write with much to do would. */
const spin = (ms: number) => {
  const end = performance.now() + ms
  while (performance.now() < end);
}

testSqliteOnly('a batch stops taking calls after BATCH_MS: the rest commit in a later turn, after a `first` call read meanwhile', async () => {
  const storage = setUp()
  let ran = 0
  const bulk = Array.from({ length: 4 * BATCH_MS }, (_, i) =>
    storage.write(async () => {
      spin(1)
      insert(i + 1)
      ran++
    }),
  )
  // What the event loop reads between two turns of the drain: it finds the first batch committed and the rest not yet run.
  const between = new Promise<{ ran: number; committed: number[] }>((resolve) => setImmediate(() => setImmediate(() => resolve({ ran, committed: rows() }))))
  const seen = await between
  expect(seen.ran).toBeGreaterThanOrEqual(BATCH_MS)
  expect(seen.ran).toBeLessThan(bulk.length)
  expect(seen.committed).toEqual(Array.from({ length: seen.ran }, (_, i) => i + 1))
  await storage.write(async () => insert(99), { first: true })
  await Promise.all(bulk)
  const all = rows()
  // The `first` call went ahead of every call that had not run yet.
  expect(all.indexOf(99)).toBe(seen.ran)
  expect(all.filter((n) => n !== 99)).toEqual(Array.from({ length: bulk.length }, (_, i) => i + 1))
})

testSqliteOnly("after a cut, a turn's share of the queue is at least half what the rest of the loop took meanwhile", async () => {
  const storage = setUp()
  let ran = 0
  const bulk = Array.from({ length: 40 }, (_, i) =>
    storage.write(async () => {
      spin(1)
      insert(i + 1)
      ran++
    }),
  )
  // Other work of 30 ms in the turn after the first cut (a flood of other requests), then a look after the next drain.
  const seen = await new Promise<[number, number]>((resolve) =>
    setImmediate(() => {
      const afterCut = ran
      spin(30)
      setImmediate(() => resolve([afterCut, ran]))
    }),
  )
  await Promise.all(bulk)
  expect(seen[0]).toBeLessThanOrEqual(BATCH_MS + 2)
  expect(seen[1] - seen[0]).toBeGreaterThanOrEqual(8)
  expect(rows()).toEqual(Array.from({ length: 40 }, (_, i) => i + 1))
})
