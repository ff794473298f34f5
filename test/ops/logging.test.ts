/** Masked recipients, no keys or codes in logs, 500s without internals (docs/api.md#errors, docs/operating.md). */
import { describe, expect, test } from 'bun:test'
import { createLogger, LOG_FLUSH_MS, stdoutLines } from '../../src/lib/logger.ts'
import { maskRecipient } from '../../src/lib/mask.ts'
import { harnessPerTest, TEST } from '../kit/harness.ts'

const start = harnessPerTest()

// The title shows the masked form only: a test run's output holds no clear recipient (.ci/run scans it).
test.each([
  ['+1555****001', '+15550100001'],
  ['+4420*****750', '+442071838750'],
  ['s*****s@otpd.test', 'success@otpd.test'],
  ['**@example.com', 'ab@example.com'],
  ['*@example.com', 'a@example.com'],
  ['+1***', '+1234'],
])('maskRecipient gives %s', (masked, clear) => {
  expect(maskRecipient(clear)).toBe(masked)
})

test('after sends, verifies and a failed delivery the log holds no key, code or clear recipient', async () => {
  const h = await start({ credits: 10 })
  const real = '+14155550123'
  const sent = await h.send({ channel: 'sms', recipient: real })
  const code = h.delivery.lastCode()
  await h.verify({ verification_id: sent.json.verification_id, code: code === '000000' ? '111111' : '000000' })
  await h.verify({ verification_id: sent.json.verification_id, code })
  await h.send({ channel: 'email', recipient: 'grace.hopper@example.com' })
  const emailCode = h.delivery.lastCode()
  h.delivery.fail = true
  const failed = await h.send({ channel: 'sms', recipient: '+14155550999', code: '987654' })
  expect(failed.status).toBe(500)
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })

  const all = h.logs.join('\n')
  expect(all).toContain(failed.json.request_id) // the failure is logged with its request id
  expect(all).toContain('+1415****999') // ...and the recipient, masked
  for (const secret of [h.key, code, emailCode, '987654', real, '+14155550999', 'grace.hopper@example.com']) {
    expect(all).not.toContain(secret)
  }
})

test('an internal fault in verify is a generic 500; the cause is logged with the request id', async () => {
  const h = await start()
  await h.failWrites(true) // every write now throws (a closed handle no longer does: statements are prepared once)
  const r = await h.verify({ verification_id: '00000000-0000-4000-8000-000000000000', code: '123456' })
  expect(r.status).toBe(500)
  expect(r.json).toEqual({ error: 'Internal server error', request_id: r.headers.get('x-request-id') })
  const line = h.logs.find((l) => l.includes(r.json.request_id))
  expect(line).toBeDefined()
  expect(line).toContain('"level":"error"')
  expect(line!.toLowerCase()).toContain('database')
})

test('an internal fault in send is 500 Failed to send verification, without internals', async () => {
  const h = await start()
  await h.failWrites(true)
  const r = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  expect(r.status).toBe(500)
  expect(r.json).toEqual({ error: 'Failed to send verification', request_id: r.headers.get('x-request-id') })
})

describe('JSON lines', () => {
  const at = Date.UTC(2026, 0, 2, 3, 4, 5, 6)
  const spread = (level: string, msg: string, fields: Record<string, unknown> = {}) =>
    JSON.stringify({ time: new Date(at).toISOString(), level, msg, ...fields })
  test.each([
    ['no fields', 'started', undefined],
    ['empty fields', 'started', {}],
    ['strings that need escaping', 'say "hi"\n', { note: 'a\\b"c\u2028', n: 3, ok: true, none: null }],
    ['nested values', 'request', { request_id: 'r', list: [1, 'two'], obj: { a: 1 } }],
    ['a field named like the line keys', 'clash', { time: 'x', level: 'y', msg: 'z', other: 1 }],
  ])('%s: the line is exactly JSON.stringify({ time, level, msg, ...fields })', (_name, msg, fields) => {
    const lines: string[] = []
    const logger = createLogger({ write: (l) => lines.push(l), now: () => at })
    logger.info(msg, fields)
    expect(lines).toEqual([spread('info', msg, fields)])
    expect(JSON.parse(lines[0]!)).toEqual(JSON.parse(spread('info', msg, fields)))
  })
})

describe('stdoutLines', () => {
  test('lines go out together in one write, LOG_FLUSH_MS after the first of them', async () => {
    const chunks: string[] = []
    const write = stdoutLines((c) => chunks.push(c))
    write('a')
    await new Promise((r) => setImmediate(r))
    write('b')
    expect(chunks).toEqual([]) // nothing written yet
    await Bun.sleep(LOG_FLUSH_MS + 10)
    expect(chunks).toEqual(['a\nb\n'])
    write('c')
    await Bun.sleep(LOG_FLUSH_MS + 10)
    expect(chunks).toEqual(['a\nb\n', 'c\n'])
  })

  test('a buffer of 64 KiB is written at once, without waiting for the turn to end', () => {
    const chunks: string[] = []
    const write = stdoutLines((c) => chunks.push(c))
    const line = 'x'.repeat(1023)
    for (let i = 0; i < 63; i++) write(line)
    expect(chunks).toEqual([])
    write(line) // 64 x 1024 bytes with the newlines
    expect(chunks.length).toBe(1)
    expect(chunks[0]!.length).toBe(64 * 1024)
  })

  test('lines written just before process.exit are not lost', () => {
    const script = `
      import { createLogger, stdoutLines } from ${JSON.stringify(new URL('../../src/lib/logger.ts', import.meta.url).pathname)}
      const logger = createLogger({ write: stdoutLines() })
      for (let i = 0; i < 3; i++) logger.info('line ' + i)
      process.exit(0)
    `
    const p = Bun.spawnSync(['bun', '-e', script], { stdout: 'pipe', stderr: 'pipe' })
    expect(p.exitCode).toBe(0)
    const out = p.stdout
      .toString()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).msg)
    expect(out).toEqual(['line 0', 'line 1', 'line 2'])
  })
})
