/**
 * WAL checkpoints on a worker thread (store/checkpointer.ts): the server's
 * connection no longer checkpoints inside its commits, and the worker copies
 * the WAL back into the database file on its own.
 */
import { afterEach, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BACKSTOP_PAGES, startCheckpointer, type Checkpointer } from '../src/store/checkpointer.ts'
import { openDatabase, type Db } from '../src/store/db.ts'

let dir: string
let db: Db
let cp: Checkpointer | undefined
afterEach(async () => {
  await cp?.stop()
  db?.$client.close()
  rmSync(dir, { recursive: true, force: true })
})

test('the worker checkpoints what the server wrote; the server connection only keeps a far backstop', async () => {
  dir = mkdtempSync(join(tmpdir(), 'otpd-ckpt-'))
  const path = join(dir, 'otpd.db')
  db = openDatabase({ path })
  const errors: string[] = []
  cp = startCheckpointer(db, path, 5000, (e) => errors.push(e))
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

test('a worker that cannot open the database reports it', async () => {
  dir = mkdtempSync(join(tmpdir(), 'otpd-ckpt-'))
  db = openDatabase({ path: join(dir, 'otpd.db') })
  const errors: string[] = []
  cp = startCheckpointer(db, join(dir, 'missing', 'nope.db'), 0, (e) => errors.push(e))
  for (let i = 0; i < 100 && errors.length === 0; i++) await Bun.sleep(20)
  expect(errors.length).toBeGreaterThan(0)
})

test('stop() resolves once the worker has closed its connection, so the server closing last removes the WAL', async () => {
  dir = mkdtempSync(join(tmpdir(), 'otpd-ckpt-'))
  const path = join(dir, 'otpd.db')
  db = openDatabase({ path })
  const started = startCheckpointer(db, path, 5000, () => {})
  db.$client.run('CREATE TABLE t (x TEXT)')
  for (let i = 0; i < 200; i++) db.$client.run('INSERT INTO t VALUES (?)', [crypto.randomUUID().repeat(20)])
  await started.next()
  await started.stop()
  db.$client.close()
  expect(existsSync(`${path}-wal`)).toBe(false)
  db = openDatabase({ path })
  expect(db.$client.query<{ n: number }, []>('SELECT count(*) AS n FROM t').get()!.n).toBe(200)
})
