/**
 * IdempotencyStore contract: a record is found within its scope while it is
 * in force, replaced once expired, and settled once its send is, the same on
 * every engine.
 */
import { expect, test } from 'bun:test'
import type { IdempotencyRecord, IdempotencyScope } from '../../../src/otp/ports/index.ts'
import { defaultKey, hash, T0, useEngine } from './data.ts'

const engine = useEngine()
const storage = () => engine().storage

const scope = (keyId: number, o: Partial<IdempotencyScope> = {}): IdempotencyScope => ({ keyId, method: 'POST', path: '/api/v1/send', key: 'k-1', ...o })
const record = (o: Partial<IdempotencyRecord> = {}): IdempotencyRecord => ({
  fingerprint: hash('body'),
  state: 'done',
  answer: { status: 200, body: '{"ok":true}' },
  createdAt: T0,
  ...o,
})

test('find answers the record of its scope made after `since`, and nothing for another scope', async () => {
  const key = await defaultKey(storage())
  const other = await defaultKey(storage(), 'pk_other')
  await storage().write((r) => r.idempotency.save(scope(key), record(), null))
  const find = (s: IdempotencyScope, since = T0 - 1) => storage().write((r) => r.idempotency.find(s, since))
  expect(await find(scope(key))).toEqual(record())
  // Made at `since` or before: expired, as none.
  expect(await find(scope(key), T0)).toBeUndefined()
  for (const s of [scope(other), scope(key, { method: 'PUT' }), scope(key, { path: '/api/v1/verify' }), scope(key, { key: 'k-2' })]) {
    expect(await find(s)).toBeUndefined()
  }
})

test('save replaces an expired record of the same scope', async () => {
  const key = await defaultKey(storage())
  await storage().write((r) => r.idempotency.save(scope(key), record({ fingerprint: hash('old'), answer: { status: 500, body: 'old' } }), null))
  const fresh = record({ fingerprint: hash('new'), state: 'running', answer: { status: 200, body: 'new' }, createdAt: T0 + 100 })
  await storage().write((r) => r.idempotency.save(scope(key), fresh, 7))
  expect(await storage().read((r) => r.idempotency.find(scope(key), T0 + 50))).toEqual(fresh)
})

test('settle makes the running record of the send `done`, with the answer given or the one it holds', async () => {
  const key = await defaultKey(storage())
  const running = (body: string) => record({ state: 'running', answer: { status: 200, body } })
  await storage().write(async (r) => {
    await r.idempotency.save(scope(key, { key: 'a' }), running('sent a'), 1)
    await r.idempotency.save(scope(key, { key: 'b' }), running('sent b'), 2)
    await r.idempotency.save(scope(key, { key: 'c' }), running('sent c'), 3)
  })
  await storage().write(async (r) => {
    await r.idempotency.settle(1, { status: 500, body: 'failed' })
    await r.idempotency.settle(2, null)
  })
  const find = (k: string) => storage().read((r) => r.idempotency.find(scope(key, { key: k }), 0))
  expect((await find('a'))?.state).toBe('done')
  expect((await find('a'))?.answer).toEqual({ status: 500, body: 'failed' })
  expect((await find('b'))?.state).toBe('done')
  expect((await find('b'))?.answer).toEqual({ status: 200, body: 'sent b' })
  expect((await find('c'))?.state).toBe('running')
  // A record already done stays as it is.
  await storage().write((r) => r.idempotency.settle(1, { status: 200, body: 'late' }))
  expect((await find('a'))?.answer).toEqual({ status: 500, body: 'failed' })
})
