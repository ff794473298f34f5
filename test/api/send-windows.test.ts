/**
 * The per-recipient send windows' arithmetic (docs/api.md#limits), as a table:
 * a recipient's send times in, the window that refuses (its limit, its name
 * and the whole seconds to wait, rounded up) out. The API's own answers are
 * in send-recipient-limits.test.ts.
 */
import { expect, test } from 'bun:test'
import { DEFAULT_LIMITS } from '../../src/otp/types.ts'
import { type RecipientLimited, recipientWindowVerdict } from '../../src/otp/windows.ts'

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
const NOW = 100 * DAY
const limits = { ...DEFAULT_LIMITS, recipientPerMinute: 2, recipientPerHour: 3, recipientPerDay: 4 }
/** Send times this long before now, oldest first. */
const ago = (...ms: number[]) => ms.map((x) => NOW - x)

const rows: [string, number[], RecipientLimited | null][] = [
  ['no sends: room', [], null],
  ['under every limit: room', ago(30 * SECOND), null],
  ['the minute full: its oldest send leaves first', ago(10 * SECOND, 5 * SECOND), { max: 2, period: 'minute', retryAfter: 50 }],
  ['a send exactly a minute old has left the minute', ago(MINUTE, 5 * SECOND), null],
  ['a send 1 ms short of a minute: 1 s, rounded up, never 0', ago(MINUTE - 1, 5 * SECOND), { max: 2, period: 'minute', retryAfter: 1 }],
  ['the hour full', ago(30 * MINUTE, 20 * MINUTE, 10 * MINUTE), { max: 3, period: 'hour', retryAfter: 1800 }],
  ['a send exactly an hour old has left the hour', ago(HOUR, 20 * MINUTE, 10 * MINUTE), null],
  ['the 24 hours full', ago(23 * HOUR, 22 * HOUR, 21 * HOUR, 20 * HOUR), { max: 4, period: '24 hours', retryAfter: 3600 }],
  ['a send exactly 24 hours old has left them', ago(DAY, 22 * HOUR, 21 * HOUR, 20 * HOUR), null],
  ['the minute and the hour full: the longer wait names the window', ago(50 * MINUTE, 20 * SECOND, 10 * SECOND), { max: 3, period: 'hour', retryAfter: 600 }],
  [
    'the hour and the 24 hours full: the longer wait',
    ago(23 * HOUR, 22 * HOUR, 40 * MINUTE, 30 * MINUTE, 20 * MINUTE),
    { max: 4, period: '24 hours', retryAfter: 7200 },
  ],
  ['every window full: the longest wait', ago(23 * HOUR, 50 * MINUTE, 20 * SECOND, 10 * SECOND), { max: 4, period: '24 hours', retryAfter: 3600 }],
]

test.each(rows)('%s', (_, times, expected) => {
  expect(recipientWindowVerdict(times, limits, NOW)).toEqual(expected)
})

test('more sends than the limit (a limit lowered by a reload): the max-th newest must leave', () => {
  const wide = { ...limits, recipientPerHour: 10, recipientPerDay: 10 }
  expect(recipientWindowVerdict(ago(50 * SECOND, 40 * SECOND, 30 * SECOND), wide, NOW)).toEqual({ max: 2, period: 'minute', retryAfter: 20 })
})

test('equal waits: the shorter window names it', () => {
  const tight = { ...limits, recipientPerMinute: 1, recipientPerHour: 2 }
  // The minute's one send and the hour's second-newest both leave in 30 s.
  expect(recipientWindowVerdict(ago(HOUR - 30 * SECOND, 30 * SECOND), tight, NOW)).toEqual({ max: 1, period: 'minute', retryAfter: 30 })
})

test('a waiting time is whole seconds, rounded up', () => {
  expect(recipientWindowVerdict(ago(MINUTE - 1001, 5 * SECOND), limits, NOW)?.retryAfter).toBe(2)
  expect(recipientWindowVerdict(ago(MINUTE - 1000, 5 * SECOND), limits, NOW)?.retryAfter).toBe(1)
})
