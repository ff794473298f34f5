/**
 * Log forging (docs/operating.md#logs): a value from a client cannot write
 * a line of its own or drive the terminal. In text mode every control
 * character (C0 such as LF, CR and ESC, DEL, C1) of a message, a name or a
 * value is escaped, and a backslash too, so an escape is always otpd's; JSON
 * lines escape C0 by JSON's rules, and DEL and C1 as `\u00XX`.
 */
import { expect, test } from 'bun:test'
import { createLogger, textSafe } from '../../src/lib/logger.ts'
import { harnessPerTest } from '../kit/harness.ts'

const start = harnessPerTest()
/** A forged line: a newline, a colour, a time and a level, as the review ran it. */
const FORGED = '\n\u001b[31m2026-01-01T00:00:00.000Z ERROR database corrupted\u001b[0m'
/** Every character a terminal acts on: C0, DEL, C1. */
const CONTROLS = Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(i)).concat(
  '\u007f',
  ...Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(0x80 + i)),
)
const RAW_CONTROL = /[\u0000-\u001f\u007f-\u009f]/

function textLines() {
  const lines: string[] = []
  return { lines, logger: createLogger({ level: 'debug', format: 'text', write: (l) => lines.push(l), now: () => 0 }) }
}

test('the forged-line attack through the API: a recipient with a newline and ANSI escapes stays inside its one text line', async () => {
  const h = await start({ logFormat: 'text' })
  const r = await h.send({ channel: 'email', recipient: `ab@x.test${FORGED}` })
  expect(r.status).toBe(400)
  const line = h.logs.find((l) => l.includes(r.json.request_id))!
  expect(h.logs.filter((l) => l.includes('ERROR'))).toEqual([line])
  expect(line).not.toMatch(RAW_CONTROL)
  expect(line).toEndWith(String.raw`recipient=**@x.test\n\x1b[31m2026-01-01T00:00:00.000Z ERROR database corrupted\x1b[0m`)
})

test('text mode: every control character of a message, a field name and a string or other value is escaped; a backslash too', () => {
  const { lines, logger } = textLines()
  const all = CONTROLS.join('')
  logger.info(`m${all}`, { [`k${all}`]: `v${all}\\`, n: { nested: `x${all}` } })
  expect(lines).toHaveLength(1)
  expect(lines[0]).not.toMatch(RAW_CONTROL)
  expect(textSafe('a\r\nb\tc\u001bd\u007fe\u009bf\\g')).toBe(String.raw`a\r\nb\tc\x1bd\x7fe\x9bf\\g`)
  expect(textSafe('plain +1555****001 s*****s@otpd.test')).toBe('plain +1555****001 s*****s@otpd.test')
  logger.warn(`w${FORGED}`)
  expect(lines[1]).toBe(String.raw`1970-01-01T00:00:00.000Z WARN  w\n\x1b[31m2026-01-01T00:00:00.000Z ERROR database corrupted\x1b[0m`)
})

test('JSON mode: DEL and C1, which JSON leaves raw, are escaped too; the line parses back to the same values', () => {
  const lines: string[] = []
  const logger = createLogger({ level: 'debug', write: (l) => lines.push(l), now: () => 0 })
  const all = CONTROLS.join('')
  logger.info(`m${all}`, { v: all })
  logger.info('x', { time: 1, v: all }) // the slow path (a field named like the line's own)
  for (const line of lines) {
    expect(line).not.toMatch(RAW_CONTROL)
    expect(JSON.parse(line).v).toBe(all)
  }
  expect(JSON.parse(lines[0]!).msg).toBe(`m${all}`)
})
