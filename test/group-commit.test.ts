/**
 * Group commit (store/transactor.ts): `grouped` calls made in one turn share
 * one IMMEDIATE transaction, run in call order, each in its own savepoint, and
 * settle only once the commit is done. Checked on a real SQLite file, with a
 * second connection standing for another process.
 */
import { Database } from 'bun:sqlite'
import { afterEach, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase, type Db } from '../src/store/db.ts'
import { MAX_BATCH, SqliteTransactor } from '../src/store/transactor.ts'

let dir: string
let db: Db
let other: Database
afterEach(() => {
  other?.close()
  db?.$client.close()
  rmSync(dir, { recursive: true, force: true })
})

function setUp(busyTimeoutMs = 5000) {
  dir = mkdtempSync(join(tmpdir(), 'otpd-group-'))
  db = openDatabase({ path: join(dir, 'g.db'), busyTimeoutMs })
  db.$client.run('CREATE TABLE t (n INTEGER NOT NULL)')
  other = new Database(join(dir, 'g.db'))
  other.run('PRAGMA busy_timeout = 5000')
  return new SqliteTransactor(db)
}

const insert = (n: number) => db.$client.run('INSERT INTO t (n) VALUES (?)', [n])
const rows = (c: Database = other) => c.query<{ n: number }, []>('SELECT n FROM t ORDER BY rowid').all().map((r) => r.n)

test('calls in one turn share one transaction, run in call order and see each other', async () => {
  const tx = setUp()
  const seenByOther: number[][] = []
  const seenInside: number[][] = []
  const results = await Promise.all(
    [1, 2, 3].map((n) =>
      tx.grouped(() => {
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

test('a promise settles only after the commit: another connection already sees the write', async () => {
  const tx = setUp()
  let visible: number[] = []
  await tx.grouped(() => insert(7)).then(() => (visible = rows()))
  expect(visible).toEqual([7])
})

test('a call that throws undoes only its own writes; the others land and resolve', async () => {
  const tx = setUp()
  const outcomes = await Promise.allSettled([
    tx.grouped(() => insert(1)),
    tx.grouped(() => {
      insert(2)
      insert(3)
      throw new Error('item 2 fails')
    }),
    tx.grouped(() => {
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

test('calls run once when none throws; when one throws, the others run again and end as if it had not been there', async () => {
  const tx = setUp()
  const runs = [0, 0, 0]
  await Promise.all([0, 1, 2].map((i) => tx.grouped(() => (runs[i]!++, insert(i)))))
  expect(runs).toEqual([1, 1, 1])
  const counted = [0, 0, 0]
  const outcomes = await Promise.allSettled([
    tx.grouped(() => {
      counted[0]!++
      insert(10)
      return rows(db.$client).length
    }),
    tx.grouped(() => {
      counted[1]!++
      insert(11)
      throw new Error('fails every time')
    }),
    tx.grouped(() => {
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

test('a nested atomically inside a grouped call is part of it', async () => {
  const tx = setUp()
  await Promise.allSettled([
    tx.grouped(() => tx.atomically(() => insert(1))),
    tx.grouped(() => {
      tx.atomically(() => insert(2))
      throw new Error('after the nested write')
    }),
  ])
  expect(rows()).toEqual([1])
})

test('when the write lock cannot be had, every call of the batch rejects and nothing lands', async () => {
  const tx = setUp(0)
  other.run('BEGIN IMMEDIATE')
  const outcomes = await Promise.allSettled([tx.grouped(() => insert(1)), tx.grouped(() => insert(2))])
  expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected'])
  other.run('COMMIT')
  expect(rows()).toEqual([])
  // The transactor is usable again afterwards.
  await tx.grouped(() => insert(3))
  expect(rows()).toEqual([3])
})

test('more calls than one batch holds all land, in call order', async () => {
  const tx = setUp()
  const n = MAX_BATCH * 2 + 5
  const results = await Promise.all(Array.from({ length: n }, (_, i) => tx.grouped(() => (insert(i), i))))
  expect(results).toEqual(Array.from({ length: n }, (_, i) => i))
  expect(rows()).toEqual(results)
})

test('calls made in a later turn get a transaction of their own', async () => {
  const tx = setUp()
  await tx.grouped(() => insert(1))
  let seenByOther: number[] = []
  await tx.grouped(() => {
    insert(2)
    seenByOther = rows()
  })
  expect(seenByOther).toEqual([1])
})

test('onStale: heard when another connection committed, a call was rolled back, or after an atomically transaction; not after grouped commits', async () => {
  const tx = setUp()
  let heard = 0
  tx.onStale(() => heard++)
  await tx.grouped(() => insert(1)) // the first look at data_version
  heard = 0
  await tx.grouped(() => insert(2))
  await tx.grouped(() => insert(3))
  expect(heard).toBe(0)
  // Operator changes on this connection: data_version does not show them.
  tx.atomically(() => insert(3))
  expect(heard).toBe(1)
  heard = 0
  other.run('INSERT INTO t (n) VALUES (4)')
  await tx.grouped(() => insert(5))
  expect(heard).toBe(1)
  await tx.grouped(() => {
    throw new Error('rolled back')
  }).catch(() => {})
  expect(heard).toBeGreaterThan(1)
  heard = 0
  expect(() =>
    tx.atomically(() => {
      throw new Error('rolled back too')
    }),
  ).toThrow('rolled back too')
  expect(heard).toBe(1)
})

test('settleAfter: a batch is answered only once its durability promise resolves, and fails with it', async () => {
  const tx = setUp()
  let release!: () => void
  let fail!: (e: Error) => void
  const syncs: Promise<void>[] = []
  tx.settleAfter(() => {
    const p = new Promise<void>((resolve, reject) => {
      release = resolve
      fail = reject
    })
    syncs.push(p)
    return p
  })
  let settled = false
  const first = tx.grouped(() => insert(1)).then(() => (settled = true))
  await Bun.sleep(20)
  // Committed (another connection sees it) but not yet answered.
  expect(rows()).toEqual([1])
  expect(settled).toBe(false)
  release()
  await first
  expect(settled).toBe(true)
  const second = tx.grouped(() => insert(2))
  await Bun.sleep(20)
  fail(new Error('fsync failed'))
  await expect(second).rejects.toThrow('fsync failed')
  expect(syncs).toHaveLength(2)
})
