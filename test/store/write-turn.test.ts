/**
 * The write turn between the request thread and the checkpoint worker
 * (store/sqlite/write-turn.ts): the group commit (store/sqlite/storage.ts) writes only while holding it, waits
 * while the worker holds it, and takes it back from a worker that holds it
 * too long.
 */
import { expect } from 'bun:test'
import { join } from 'node:path'
import { Database } from 'bun:sqlite'
import { openDatabase, openReader } from '../../src/store/sqlite/db.ts'
import { SqliteStorage } from '../../src/store/sqlite/storage.ts'
import { giveTurnBack, takeTurnForCheckpoint, TURN_CHECKPOINT, TURN_FREE, TURN_SERVER, WriteTurn } from '../../src/store/sqlite/write-turn.ts'
import { closeAfterTest, tempDir } from '../kit/cleanup.ts'
import { testSqliteOnly } from '../kit/harness.ts'

/** A storage sharing `turn` on a database in a temp dir; its writer and reader are closed and the dir removed after the test. */
function setUp(turn: WriteTurn) {
  const path = join(tempDir('otpd-turn-'), 'otpd.db')
  const db = openDatabase({ path })
  closeAfterTest(db.$client)
  db.$client.run('CREATE TABLE t (x INTEGER)')
  const reader = openReader(db, path)
  closeAfterTest(reader.$client)
  const storage = new SqliteStorage(db, reader, {
    busyTimeoutMs: 5000,
    onFatal: (err) => {
      throw err
    },
  })
  storage.shareWritesWith(turn)
  // Another connection sees only what was committed.
  const other = new Database(path, { readonly: true })
  const committed = () => other.query<{ n: number }, []>('SELECT count(*) AS n FROM t').get()!.n
  return { db, storage, committed, closeOther: () => other.close() }
}

testSqliteOnly('the server takes a free turn and gives it back; it cannot take it while the worker holds it', () => {
  const turn = new WriteTurn(1_000)
  expect(turn.take()).toBe(true)
  expect(turn.cell[0]).toBe(TURN_SERVER)
  expect(takeTurnForCheckpoint(turn.cell, 20)).toBe(false)
  turn.give()
  expect(turn.cell[0]).toBe(TURN_FREE)
  expect(takeTurnForCheckpoint(turn.cell, 20)).toBe(true)
  expect(turn.cell[0]).toBe(TURN_CHECKPOINT)
  expect(turn.take()).toBe(false)
  giveTurnBack(turn.cell)
  expect(turn.take()).toBe(true)
})

testSqliteOnly('a batch waits while the worker holds the turn, and commits once it is given back', async () => {
  const turn = new WriteTurn(60_000)
  const { db, storage, committed, closeOther } = setUp(turn)
  expect(takeTurnForCheckpoint(turn.cell, 0)).toBe(true)
  let settled = 0
  const writes = [1, 2, 3].map((x) => storage.write(async () => db.$client.run('INSERT INTO t VALUES (?)', [x])).then(() => settled++))
  await Bun.sleep(50)
  expect(settled).toBe(0)
  expect(committed()).toBe(0)
  // Requests keep joining the waiting batch.
  writes.push(storage.write(async () => db.$client.run('INSERT INTO t VALUES (4)')).then(() => settled++))
  giveTurnBack(turn.cell)
  turn.freed()
  await Promise.all(writes)
  expect(settled).toBe(4)
  expect(committed()).toBe(4)
  // The server gave the turn back after its batch.
  expect(turn.cell[0]).toBe(TURN_FREE)
  closeOther()
})

testSqliteOnly('a worker that holds the turn past the stuck bound does not stop the writes', async () => {
  const turn = new WriteTurn(100)
  const { db, storage, committed, closeOther } = setUp(turn)
  expect(takeTurnForCheckpoint(turn.cell, 0)).toBe(true)
  const started = performance.now()
  await storage.write(async () => db.$client.run('INSERT INTO t VALUES (1)'))
  expect(performance.now() - started).toBeGreaterThanOrEqual(95)
  expect(committed()).toBe(1)
  // The storage answers the batch's calls before it gives the turn back, in the same task.
  await Bun.sleep(0)
  expect(turn.cell[0]).toBe(TURN_FREE)
  closeOther()
})

testSqliteOnly('a worker asleep waiting for the turn is woken as soon as the server gives it back, not at its time-out', async () => {
  const turn = new WriteTurn(60_000)
  expect(turn.take()).toBe(true)
  const worker = new Worker(new URL('../kit/fixtures/turn-taker.ts', import.meta.url).href)
  let waiting = () => {}
  const asleep = new Promise<void>((resolve) => (waiting = resolve))
  const answer = new Promise<{ took: boolean; waitedMs: number }>((resolve) => (worker.onmessage = (e) => (e.data.waiting ? waiting() : resolve(e.data))))
  worker.postMessage({ buffer: turn.buffer, timeoutMs: 10_000 })
  // Given 100 ms after the worker began to wait (its start-up on a busy machine is not counted).
  await asleep
  await Bun.sleep(100)
  turn.give()
  const { took, waitedMs } = await answer
  worker.terminate()
  expect(took).toBe(true)
  expect(waitedMs).toBeGreaterThanOrEqual(50)
  expect(waitedMs).toBeLessThan(2_000)
})
