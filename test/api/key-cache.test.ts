/**
 * The server caches key look-ups (otp/api-keys.ts): a status change made by
 * another process on the same database (the CLI) takes effect within 1 s,
 * measured on the injected clock; one made through the server's own Admin
 * takes effect at once.
 */
import { describe, expect, test } from 'bun:test'
import { openCore, type Core } from '../../src/app/index.ts'
import { resolveConfig } from '../../src/config/load.ts'
import { KEY_CACHE_MS } from '../../src/otp/api-keys.ts'
import { harnessPerTest, TEST, testDatabase, type Harness } from '../kit/harness.ts'
import { afterTest } from '../kit/cleanup.ts'

let h: Harness
const start = harnessPerTest()
let cli: Core

/** Another process's view of the same database, as `otpd keys ...` has it. */
const otherProcess = async () => {
  const core = await openCore(resolveConfig(await testDatabase(h.dir, h.databaseUrl)), { clock: h.clock })
  afterTest(() => core.engine.close())
  return core
}
const probe = (key: string) => h.verify({ verification_id: '00000000-0000-4000-8000-000000000000', code: '123456' }, key)

describe('a change from another process applies within 1 s', () => {
  test.each([
    ['disabled', 403, 'API key is disabled'],
    ['revoked', 401, 'Invalid API key'],
  ] as const)('%s: the old status at most until 1 s after the change, the new one from then on', async (status, code, error) => {
    h = await start()
    cli = await otherProcess()
    const k = await h.server.admin.createKey({ name: 'victim' })
    expect((await probe(k.key)).status).toBe(404) // looked up and cached now
    const t0 = h.clock.now()
    await cli.admin.setKeyStatus(k.prefix, status)
    h.clock.set(t0 + KEY_CACHE_MS)
    const r = await probe(k.key)
    expect(r.status).toBe(code)
    expect(r.json.error).toBe(error)
    expect(KEY_CACHE_MS).toBeLessThanOrEqual(1_000)
  })

  test('the cache is what delays it: before the bound the old status may still answer, never after', async () => {
    h = await start()
    cli = await otherProcess()
    const k = await h.server.admin.createKey({ name: 'victim' })
    const t0 = h.clock.now()
    expect((await probe(k.key)).status).toBe(404)
    await cli.admin.setKeyStatus(k.prefix, 'disabled')
    h.clock.set(t0 + KEY_CACHE_MS - 1)
    expect((await probe(k.key)).status).toBe(404)
    h.clock.set(t0 + KEY_CACHE_MS)
    expect((await probe(k.key)).status).toBe(403)
    await cli.admin.setKeyStatus(k.prefix, 'active')
    h.clock.set(t0 + 2 * KEY_CACHE_MS)
    expect((await probe(k.key)).status).toBe(404)
  })

  test('a key created by another process works at once (unknown keys are never cached)', async () => {
    h = await start()
    cli = await otherProcess()
    expect((await probe('otpd_' + 'A'.repeat(40))).status).toBe(401)
    const k = await cli.admin.createKey({ name: 'new' })
    expect((await probe(k.key)).status).toBe(404)
  })
})

test('a change through the server itself applies to the very next request', async () => {
  h = await start()
  const k = await h.server.admin.createKey({ name: 'victim' })
  expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS }, k.key)).status).toBe(200)
  await h.server.admin.setKeyStatus(k.prefix, 'disabled')
  expect((await probe(k.key)).status).toBe(403)
})

test('requests that miss the cache together share one look-up of their key', async () => {
  h = await start()
  const storage = h.server.storage
  const read = storage.read.bind(storage)
  let reads = 0
  storage.read = (fn) => {
    reads++
    return read(fn)
  }
  const all = await Promise.all(Array.from({ length: 10 }, () => probe(h.key)))
  expect(all.map((r) => r.status)).toEqual(Array(10).fill(404))
  expect(reads).toBe(1)
  // Once its entry runs out, again one look-up for all of them.
  h.clock.set(h.clock.now() + KEY_CACHE_MS)
  await Promise.all(Array.from({ length: 10 }, () => probe(h.key)))
  expect(reads).toBe(2)
})

test('a change through the server during a look-up: the look-up answers its requests, and the next request reads the key again', async () => {
  h = await start()
  const k = await h.server.admin.createKey({ name: 'victim' })
  const storage = h.server.storage
  const read = storage.read.bind(storage)
  let release!: () => void
  const held = new Promise<void>((r) => (release = r))
  let readDone!: () => void
  const hasRead = new Promise<void>((r) => (readDone = r))
  storage.read = async (fn) => {
    const rows = await read(fn)
    readDone()
    await held
    return rows
  }
  const before = probe(k.key) // its look-up reads the key active, then waits
  await hasRead
  storage.read = read
  await h.server.admin.setKeyStatus(k.prefix, 'disabled')
  release()
  expect((await before).status).toBe(404)
  // Not cached from the look-up that began before the change.
  expect((await probe(k.key)).status).toBe(403)
})

test('last_used_at is written at most once a second, and is never more than 1 s behind', async () => {
  h = await start()
  const lastUsed = async () => (await h.server.admin.listKeys())[0]!.lastUsedAt
  const t0 = h.clock.now()
  expect((await probe(h.key)).status).toBe(404)
  expect(await lastUsed()).toBe(t0)
  h.clock.set(t0 + 999)
  expect((await probe(h.key)).status).toBe(404)
  expect(await lastUsed()).toBe(t0)
  h.clock.set(t0 + 1_000)
  expect((await probe(h.key)).status).toBe(404)
  expect(await lastUsed()).toBe(t0 + 1_000)
})

// The account's code length is cached too (store/sqlite/credit-store.ts), but only until
// the database changes: a change from anywhere applies to the very next send.
test.each([
  ['another process', async () => (cli = await otherProcess()).admin],
  ['the server itself', async () => h.server.admin],
])('a code length set through %s applies to the very next send, without waiting', async (_where, admin) => {
  h = await start({ credits: 10 })
  let n = 0
  const codeOf = async () => {
    // A new recipient each time: the per-recipient limit stays out of the way.
    expect((await h.send({ channel: 'sms', recipient: `+1415555010${n++}`, message: '[{code}]' })).status).toBe(200)
    return /^\[(\d+)\]$/.exec(h.delivery.sent.at(-1)!.text)![1]!
  }
  expect((await codeOf()).length).toBe(6) // read and cached now
  const a = await admin()
  for (const length of [8, 4, 10]) {
    await a.setCodeLength('default', length)
    expect((await codeOf()).length).toBe(length)
  }
})
