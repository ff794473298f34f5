/** GET /healthz and GET /readyz: no key, not rate limited, 503 naming what is wrong. */
import { expect, test } from 'bun:test'
import { READY_CACHE_MS } from '../../src/app/index.ts'
import { closeDatabaseUnder, harnessPerTest, ON_PG, TEST, UUID_V4, type Harness } from '../kit/harness.ts'

const MIGRATIONS_TABLE = ON_PG ? 'drizzle.__drizzle_migrations' : '__drizzle_migrations'

let h: Harness
const start = harnessPerTest()

const get = (path: string, headers: Record<string, string> = {}) => h.call(path, undefined, { method: 'GET', key: null, headers })

test('/healthz answers 200 without a key, with a request id', async () => {
  h = await start()
  const r = await get('/healthz')
  expect(r.status).toBe(200)
  expect(r.headers.get('content-type')).toContain('application/json')
  expect(r.json).toEqual({ status: 'ok', request_id: r.headers.get('x-request-id') })
  expect(r.json.request_id).toMatch(UUID_V4)
})

test('/readyz answers 200 with every check ok on a healthy server', async () => {
  h = await start()
  const r = await get('/readyz')
  expect(r.status).toBe(200)
  expect(r.json).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', delivery: 'ok' }, request_id: r.headers.get('x-request-id') })
})

test('a database that refuses writes makes /readyz 503 naming the database; the cause goes to the log', async () => {
  h = await start()
  await h.failWrites(true) // every write now fails as on a read-only file
  // Readiness only reads (app/operations.ts): a write that fails is what tells it.
  expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).status).toBe(500)
  const r = await get('/readyz')
  expect(r.status).toBe(503)
  expect(r.json).toEqual({
    status: 'not ready',
    error: 'Not ready: database',
    checks: { database: 'failed', migrations: 'ok', delivery: 'ok' },
    request_id: r.headers.get('x-request-id'),
  })
  expect(h.logs.some((l) => l.includes('not ready') && l.includes('readonly'))).toBe(true)
  await h.failWrites(false)
  // A write that succeeds clears it; /readyz answers from its last look for READY_CACHE_MS.
  expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).status).toBe(200)
  h.clock.advance(READY_CACHE_MS)
  expect((await get('/readyz')).status).toBe(200)
  expect(h.logs.some((l) => l.includes('ready again'))).toBe(true)
})

test('a database without the migrations this version needs makes /readyz 503 naming migrations', async () => {
  h = await start()
  await h.sql(`DELETE FROM ${MIGRATIONS_TABLE}`)
  const r = await get('/readyz')
  expect(r.status).toBe(503)
  expect(r.json.error).toBe('Not ready: migrations')
  expect(r.json.checks).toEqual({ database: 'ok', migrations: 'failed', delivery: 'ok' })
})

test('an invalid delivery configuration makes /readyz 503 naming delivery', async () => {
  h = await start()
  // The loader refuses such a config at start; readiness re-checks what the running process holds.
  ;(h.server.config.providers as Record<string, Record<string, unknown>>).broken = { type: 'carrier-pigeon' }
  const r = await get('/readyz')
  expect(r.status).toBe(503)
  expect(r.json.error).toBe('Not ready: delivery')
  expect(h.logs.some((l) => l.includes("providers.broken.type 'carrier-pigeon'"))).toBe(true)
})

test('several failing checks are all named; a closed database is a 503, not a 500', async () => {
  h = await start()
  await closeDatabaseUnder(h.server)
  const r = await get('/readyz')
  expect(r.status).toBe(503)
  expect(r.json.error).toBe('Not ready: database, migrations')
  expect((await get('/healthz')).status).toBe(200) // the process is still up
})

test('health endpoints ignore keys and do not count toward the per-key limit', async () => {
  h = await start({ config: { limits: { key_requests_per_minute: 2 } } })
  for (let i = 0; i < 5; i++) {
    expect((await get('/healthz', { authorization: `Bearer ${h.key}` })).status).toBe(200)
    expect((await get('/readyz', { authorization: `Bearer ${h.key}` })).status).toBe(200)
  }
  expect((await get('/healthz', { authorization: 'Bearer otpd_not-a-real-key' })).status).toBe(200)
  expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).status).toBe(200)
  expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).status).toBe(200)
  expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).status).toBe(429)
})

test('another method on a health path is 405; HEAD is answered like GET', async () => {
  h = await start()
  for (const path of ['/healthz', '/readyz']) {
    const r = await h.call(path, {}, { method: 'POST', key: null })
    expect(r.status).toBe(405)
    expect(r.json.error).toBe('Method not allowed')
  }
  const head = await h.server.http.handle(new Request('http://localhost/healthz', { method: 'HEAD' }))
  expect(head.status).toBe(200)
})

test('/readyz answers from its last look for READY_CACHE_MS (on the injected clock), then looks again', async () => {
  h = await start()
  expect((await get('/readyz')).status).toBe(200)
  await h.sql(`DELETE FROM ${MIGRATIONS_TABLE}`)
  // Within the bound: the last look's answer.
  h.clock.advance(READY_CACHE_MS - 1)
  expect((await get('/readyz')).status).toBe(200)
  // At the bound: a new look sees the change.
  h.clock.advance(1)
  const r = await get('/readyz')
  expect(r.status).toBe(503)
  expect(r.json.error).toBe('Not ready: migrations')
})
