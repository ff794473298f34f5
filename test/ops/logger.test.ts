/** Logs that fit journald (docs/operating.md): stderr for warnings and errors, `<N>` prefixes, one line per repeated error per 10 s. */
import { describe, expect, test } from 'bun:test'
import { createLogger, REPEAT_WINDOW_MS } from '../../src/lib/logger.ts'

function capture(opts: Parameters<typeof createLogger>[0] = {}) {
  let t = Date.UTC(2026, 0, 1)
  const out: string[] = []
  const err: string[] = []
  const logger = createLogger({ level: 'debug', write: (l) => out.push(l), writeErr: (l) => err.push(l), now: () => t, ...opts })
  return { logger, out, err, advance: (ms: number) => void (t += ms) }
}

describe('streams and priorities', () => {
  test('debug and info go to stdout, warn and error to stderr', () => {
    const { logger, out, err } = capture()
    logger.debug('d')
    logger.info('i')
    logger.warn('w')
    logger.error('e')
    expect(out.map((l) => JSON.parse(l).msg)).toEqual(['d', 'i'])
    expect(err.map((l) => JSON.parse(l).msg)).toEqual(['w', 'e'])
  })

  test('a stream that is the journal gets sd-daemon priority prefixes; the other does not', () => {
    const both = capture({ journal: { stdout: true, stderr: true } })
    both.logger.debug('d')
    both.logger.info('i')
    both.logger.warn('w')
    both.logger.error('e')
    expect([...both.out, ...both.err].map((l) => l.slice(0, 4))).toEqual(['<7>{', '<6>{', '<4>{', '<3>{'])
    const errOnly = capture({ journal: { stdout: false, stderr: true }, format: 'text' })
    errOnly.logger.info('i')
    errOnly.logger.error('e')
    expect(errOnly.out[0]).toMatch(/^\d{4}-/)
    expect(errOnly.err[0]).toMatch(/^<3>\d{4}-.* ERROR e$/)
  })

  test('setLevel changes the level while running', () => {
    const { logger, out } = capture({ level: 'info' })
    logger.debug('hidden')
    logger.setLevel('debug')
    logger.debug('shown')
    expect(out.map((l) => JSON.parse(l).msg)).toEqual(['shown'])
  })
})

describe('repeated errors', () => {
  test('the same error is written once per 10 s, then with the count held back', () => {
    const { logger, err, advance } = capture()
    for (let i = 0; i < 5; i++) {
      logger.error('disk full', { request_id: `r${i}` })
      advance(1_000)
    }
    expect(err).toHaveLength(1)
    expect(JSON.parse(err[0]!)).toMatchObject({ msg: 'disk full', request_id: 'r0' })
    expect(JSON.parse(err[0]!).repeated).toBeUndefined()
    advance(REPEAT_WINDOW_MS - 5_000) // 10 s after the first
    logger.error('disk full', { request_id: 'r5' })
    expect(err).toHaveLength(2)
    expect(JSON.parse(err[1]!)).toMatchObject({ msg: 'disk full', request_id: 'r5', repeated: 4 })
    advance(REPEAT_WINDOW_MS)
    logger.error('disk full')
    expect(JSON.parse(err[2]!).repeated).toBeUndefined() // nothing was held back in between
  })

  test('the key is level and message: other messages, other levels and info lines are not held back', () => {
    const { logger, out, err } = capture()
    logger.error('a')
    logger.error('b')
    logger.warn('a')
    logger.error('a')
    logger.warn('a')
    for (let i = 0; i < 3; i++) logger.info('request')
    expect(err.map((l) => `${JSON.parse(l).level} ${JSON.parse(l).msg}`)).toEqual(['error a', 'error b', 'warn a'])
    expect(out).toHaveLength(3)
  })

  test('repeatWindowMs: 0 turns it off', () => {
    const { logger, err } = capture({ repeatWindowMs: 0 })
    logger.warn('x')
    logger.warn('x')
    expect(err).toHaveLength(2)
  })
})

test('a fault is one error line with its cause; the stack goes to debug only', async () => {
  const { createHarness, TEST } = await import('../kit/harness.ts')
  const h = await createHarness()
  try {
    await h.failWrites(true)
    const r = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
    expect(r.status).toBe(500)
    const lines = h.logs
      .map((l) => JSON.parse(l) as Record<string, string>)
      .filter((l) => l.request_id === r.json.request_id && (l.msg ?? '').startsWith('request failed'))
    expect(lines.map((l) => l.level).sort()).toEqual(['debug', 'error'])
    const error = lines.find((l) => l.level === 'error')!
    expect((error.msg ?? '').toLowerCase()).toContain('readonly')
    expect(JSON.stringify(error)).not.toContain('    at ')
    // A PostgreSQL server error comes from the client's native code: its stack is its message, without frames.
    expect(lines.find((l) => l.level === 'debug')!.stack).toContain(process.env.OTPD_TEST_DATABASE === 'postgres' ? 'PostgresError: ' : '    at ')
  } finally {
    h.close()
  }
})
