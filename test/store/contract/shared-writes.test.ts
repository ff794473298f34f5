/**
 * `Storage.writeShared` (otp/ports/storage.ts) on both engines: writes made
 * together may share a transaction, and each still lands or fails alone.
 * How PostgreSQL shares them (one transaction, the bound, its faults):
 * test/pg/shared-writes.test.ts.
 */
import { expect, test } from 'bun:test'
import type { Repos } from '../../../src/otp/ports/index.ts'
import { T0, useEngine } from './data.ts'

const engine = useEngine()

/** A write that makes account `name`, after a read of its own (a round trip on PostgreSQL). */
const makeAccount = (name: string) => async (r: Repos) => {
  expect(await r.admin.findAccount(name)).toBeUndefined()
  return (await r.admin.insertAccount(name, T0)).name
}

async function names(): Promise<string[]> {
  return (await engine().sql("SELECT name FROM accounts WHERE name LIKE 'shared-%' ORDER BY name")).map((r) => String(r.name))
}

test('writes made together all land, each once, each answered with its own value', async () => {
  const all = Array.from({ length: 10 }, (_, i) => `shared-${i}`)
  expect(await Promise.all(all.map((n) => engine().storage.writeShared(makeAccount(n))))).toEqual(all)
  expect(await names()).toEqual(all)
})

test('one that throws and one whose statement fails fail alone: the others land once, nothing of the failing ones is in force', async () => {
  const { storage } = engine()
  await storage.write((r) => r.admin.insertAccount('shared-taken', T0))
  const good = ['shared-a', 'shared-b', 'shared-c']
  const results = await Promise.allSettled([
    storage.writeShared(makeAccount('shared-a')),
    storage.writeShared(async (r) => {
      await r.admin.insertAccount('shared-thrown', T0)
      throw new Error('the domain refused it')
    }),
    storage.writeShared(makeAccount('shared-b')),
    // A unique violation: the statement itself fails.
    storage.writeShared((r) => r.admin.insertAccount('shared-taken', T0 + 1)),
    storage.writeShared(makeAccount('shared-c')),
  ])
  expect(results.map((x) => x.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled'])
  expect((results[1] as PromiseRejectedResult).reason.message).toBe('the domain refused it')
  expect(await names()).toEqual([...good, 'shared-taken'].sort())
})

test('one that throws at once while another is between its statements: the other lands once, none of it outside a transaction', async () => {
  const { storage } = engine()
  const results = await Promise.allSettled([
    storage.writeShared(async () => {
      throw new Error('at once')
    }),
    // Its insert comes after a round trip: by then the first has thrown.
    storage.writeShared(makeAccount('shared-late')),
  ])
  expect(results.map((x) => x.status)).toEqual(['rejected', 'fulfilled'])
  expect(await names()).toEqual(['shared-late'])
})
