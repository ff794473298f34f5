/** One structured log line per request: what it holds, and what it never holds. */
import { expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildServer, READY_CACHE_MS } from '../../src/app/index.ts'
import { resolveConfig } from '../../src/config/load.ts'
import { ManualClock } from '../../src/lib/clock.ts'
import { createLogger } from '../../src/lib/logger.ts'
import type { PgEngine } from '../../src/store/pg/engine.ts'
import { SqliteEngine } from '../../src/store/sqlite/engine.ts'
import { harnessPerTest, TEST, testDatabase, UUID_V4, type Harness } from '../kit/harness.ts'

let h: Harness
const start = harnessPerTest()

const requestLines = () => h.logs.map((l) => JSON.parse(l) as Record<string, any>).filter((l) => l.msg === 'request')

test('a send logs one JSON line: time, request id, key prefix, route, status, duration, masked recipient', async () => {
  h = await start({ credits: 1 })
  const r = await h.send({ channel: 'sms', recipient: '+14155550123' })
  expect(r.status).toBe(200)
  const lines = requestLines()
  expect(lines).toHaveLength(1)
  const line = lines[0]!
  expect(new Date(line.time).toISOString()).toBe(line.time)
  expect(line).toMatchObject({
    level: 'info',
    msg: 'request',
    request_id: r.json.request_id,
    method: 'POST',
    route: '/api/v1/send',
    status: 200,
    key_prefix: h.key.slice(5, 13),
    channel: 'sms',
    recipient: '+1415****123',
    outcome: 'sent',
  })
  expect(line.request_id).toMatch(UUID_V4)
  expect(typeof line.duration_ms).toBe('number')
  expect(line.duration_ms).toBeGreaterThanOrEqual(0)
  const text = h.logs.join('\n')
  for (const secret of [h.key, h.key.slice(5), h.delivery.lastCode(), '+14155550123']) expect(text).not.toContain(secret)
})

test('every request gets exactly one line, errors and unknown paths included', async () => {
  h = await start()
  const results = [
    await h.send({ channel: 'email', recipient: TEST.EMAIL_SUCCESS }),
    await h.verify({ verification_id: 'nope', code: '123456' }),
    await h.send({ channel: 'fax' }),
    await h.call('/api/v1/send', {}, { key: null }),
    await h.call('/api/v1/verify', undefined, { method: 'GET' }),
    await h.call('/no/such/path?token=abc', undefined, { method: 'GET' }),
    await h.call('/healthz', undefined, { method: 'GET', key: null }),
  ]
  const lines = requestLines()
  expect(lines.map((l) => [l.request_id, l.route, l.status])).toEqual([
    [results[0]!.json.request_id, '/api/v1/send', 200],
    [results[1]!.json.request_id, '/api/v1/verify', 404],
    [results[2]!.json.request_id, '/api/v1/send', 400],
    [results[3]!.json.request_id, '/api/v1/send', 401],
    [results[4]!.json.request_id, '/api/v1/verify', 405],
    [results[5]!.json.request_id, 'unmatched', 404],
    [results[6]!.json.request_id, '/healthz', 200],
  ])
  expect(lines[0]!.recipient).toBe('s*****s@otpd.test')
  expect(lines[1]!.outcome).toBe('not_found')
  expect(lines[1]!.recipient).toBeUndefined() // verify requests carry no recipient
  expect(lines[3]!.key_prefix).toBeUndefined() // no key given
  expect(lines[6]!.level).toBe('debug') // probes stay out of the info log
  expect(h.logs.join('\n')).not.toContain('token=abc') // the raw path is never logged
})

test('a malformed key leaves no trace in the log; an unknown well-formed one only its display prefix', async () => {
  h = await start()
  const malformed = 'sk_live_SECRETSECRETSECRET'
  expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS }, malformed)).status).toBe(401)
  const unknown = 'otpd_' + 'Z'.repeat(40)
  expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS }, unknown)).status).toBe(401)
  const [first, second] = requestLines()
  expect(first!.key_prefix).toBeUndefined()
  expect(second!.key_prefix).toBe('ZZZZZZZZ')
  const text = h.logs.join('\n')
  expect(text).not.toContain('SECRET')
  expect(text).not.toContain('Z'.repeat(9))
})

test('an invalid recipient is still logged masked, never in clear', async () => {
  h = await start()
  const r = await h.send({ channel: 'sms', recipient: '14155550123999' })
  expect(r.status).toBe(400)
  expect(requestLines()[0]!.recipient).toBe('14155******999')
  expect(h.logs.join('\n')).not.toContain('14155550123999')
})

test('the level comes from the logger: at info, successful probes are not written; 5xx lines are warnings', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'otpd-log-'))
  const lines: string[] = []
  const config = resolveConfig({ ...(await testDatabase(dir)), logging: { level: 'info' } })
  const clock = new ManualClock(Date.UTC(2026, 0, 1))
  const server = await buildServer(config, {
    clock,
    logger: createLogger({ level: config.logging.level, write: (l) => lines.push(l) }),
  })
  try {
    await server.http.handle(new Request('http://localhost/healthz'))
    await server.http.handle(new Request('http://localhost/readyz'))
    expect(lines.filter((l) => l.includes('"msg":"request"'))).toEqual([])
    if (server.engine instanceof SqliteEngine) server.engine.db.$client.run('PRAGMA query_only = 1')
    else await (server.engine as PgEngine).sql.close() // a database gone away is a failed write too
    // Readiness only reads (app/operations.ts): a failed write is what tells it, and it
    // answers from its last look for READY_CACHE_MS.
    await server.admin.createAccount('refused').catch(() => {})
    clock.advance(READY_CACHE_MS)
    await server.http.handle(new Request('http://localhost/readyz'))
    const line = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request')
    expect(line).toMatchObject({ level: 'warn', route: '/readyz', status: 503 })
  } finally {
    server.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('on a terminal the same line is readable text', () => {
  const lines: string[] = []
  const logger = createLogger({ format: 'text', write: (l) => lines.push(l), now: () => Date.UTC(2026, 0, 1) })
  logger.info('request', { request_id: 'r-1', route: '/api/v1/send', status: 200, duration_ms: 1.5, recipient: '+1415****123' })
  expect(lines).toEqual(['2026-01-01T00:00:00.000Z INFO  request request_id=r-1 route=/api/v1/send status=200 duration_ms=1.5 recipient=+1415****123'])
})
