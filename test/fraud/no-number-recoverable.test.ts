/**
 * What otpd keeps and emits about a send shows no more digits of the number
 * than its mask (docs/api.md#fraud-guard, docs/api.md#errors): 200 numbers
 * sent to through the API (accepted, verified, failed in delivery, refused
 * by rules 1, 2 and 4 so that send.blocked events exist, under
 * Idempotency-Keys), then every table the engine's catalog lists (a new
 * table is covered without a change here), every event body a receiver got
 * and every log line are searched for the numbers' digits.
 *
 * A mask (`+9989*****001`) shows at most 4 digits in a row, so any run of 5
 * or more of a number's digits is a leak: the fraud rows' prefix in clear,
 * or a send.blocked body naming the prefix beside the mask, gave all of the
 * number but one digit. A run counts when it stands alone (bounded by
 * anything but a letter, digit, `_` or `-`): digits inside a hash, an id or
 * a UUID are chance, not the number. Allowed: a blocked scope's prefix in
 * the block record (fraud_blocks), which names a range under attack and no
 * verification.
 */
import { expect, test } from 'bun:test'
import { maskRecipient } from '../../src/lib/mask.ts'
import { deliverEvents } from '../kit/events.ts'
import { approve, ca, GRACE, guardedWithReceiverPerTest, us, uz, uz2 } from '../kit/fraud.ts'
import { DAY, type Harness, ON_PG } from '../kit/harness.ts'

const withReceiver = guardedWithReceiverPerTest()
/** British mobile numbers, refused by rule 1 below. */
const gb = (i: number) => `+447700900${String(i).padStart(3, '0')}`

/** Every value of every table, with where it is: the catalog names the tables. */
async function everyStoredValue(h: Harness): Promise<{ where: string; value: unknown }[]> {
  const tables = ON_PG
    ? (
        await h.sql(
          `SELECT table_schema AS s, table_name AS t FROM information_schema.tables
           WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
        )
      ).map((r) => `"${r.s}"."${r.t}"`)
    : (await h.sql(`SELECT name FROM sqlite_master WHERE type = 'table'`)).map((r) => `"${r.name}"`)
  const out: { where: string; value: unknown }[] = []
  for (const t of tables) {
    for (const row of await h.sql(`SELECT * FROM ${t}`)) {
      for (const [column, value] of Object.entries(row)) out.push({ where: `${t}.${column}`, value })
    }
  }
  return out
}

/** The runs of digits in `text` that stand alone (not inside a token of letters, digits, `_` or `-`). */
function standaloneDigitRuns(text: string): string[] {
  return [...text.matchAll(/[A-Za-z0-9_-]+/g)].map((m) => m[0]).filter((token) => /^[0-9]+$/.test(token))
}

function asText(value: unknown): string | null {
  if (value === null || value === undefined) return null
  if (value instanceof Uint8Array) return Buffer.from(value).toString('latin1')
  return String(value)
}

test('200 numbers through the API: no table, event body or log line shows more of a number than its mask (5 digits in a row)', async () => {
  const { h, rx } = await withReceiver()
  const numbers: string[] = []
  const send = async (recipient: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
    numbers.push(recipient)
    return h.call('/api/v1/send', { channel: 'sms', recipient, ...extra }, { headers })
  }
  const statuses: number[] = []

  // UZ proven in another prefix, a day back; then 20 unapproved sends to +99890123, some under an Idempotency-Key.
  numbers.push(uz2(1))
  await approve(h, uz2(1))
  h.clock.advance(DAY)
  for (let i = 0; i < 20; i++) statuses.push((await send(uz(100 + i), { ip: `198.51.100.${i}` }, i % 2 ? { 'idempotency-key': `k-${i}` } : {})).status)
  // Older than the grace period: the prefix and the country block (rule 4), and each refusal emits send.blocked.
  h.clock.advance(GRACE)
  for (let i = 0; i < 40; i++) statuses.push((await send(uz(200 + i), {}, i % 2 ? { 'idempotency-key': `b-${i}` } : {})).status)

  // US and Canada proven; 60 US sends, half of them verified, some with a wrong code first.
  numbers.push(us(1), ca(1))
  await approve(h, us(1))
  await approve(h, ca(1))
  for (let i = 0; i < 60; i++) {
    const r = await send(us(100 + i))
    statuses.push(r.status)
    if (i % 3 === 0) await h.verify({ verification_id: r.json.verification_id, code: '000000' })
    if (i % 2 === 0) await h.verify({ verification_id: r.json.verification_id, code: h.delivery.lastCode() })
  }
  // 30 Canadian sends, 5 of them failing in delivery (refunded, delivery_failed events).
  for (let i = 0; i < 30; i++) {
    h.delivery.fail = i < 5
    statuses.push((await send(ca(100 + i))).status)
  }
  h.delivery.fail = false
  // 15 from one end-user IP: 10 go, then rule 2 refuses.
  for (let i = 0; i < 15; i++) statuses.push((await send(ca(200 + i), { ip: '203.0.113.9' })).status)
  // Rule 1: Britain not allowed for the account.
  await h.server.fraud.setAccount('default', { allowedCountries: ['US', 'CA', 'UZ'] })
  for (let i = 0; i < 32; i++) statuses.push((await send(gb(100 + i))).status)
  await deliverEvents(h)

  expect(new Set(numbers).size).toBe(200)
  // Every kind of outcome happened: accepted, delivery failed, refused by rules 1, 2 and 4.
  const count = (s: number) => statuses.filter((x) => x === s).length
  expect([count(200), count(500), count(429), count(403)]).toEqual([20 + 60 + 25 + 10, 5, 40 + 5, 32])
  const blocked = rx.received.filter((r) => r.json.type === 'send.blocked')
  expect(new Set(blocked.map((r) => r.json.data.rule))).toEqual(new Set(['conversion', 'ip', 'geo']))
  expect(blocked).toHaveLength(40 + 5 + 32)

  const stored = await everyStoredValue(h)
  const where = new Set(stored.map((s) => s.where.split('.').slice(0, -1).join('.')))
  // The catalog listed the tables that hold sends (a rename would make this search empty).
  for (const t of ['fraud_sends', 'fraud_minutes', 'fraud_blocks', 'events', 'idempotency_keys', 'verifications']) {
    expect([...where].some((w) => w.endsWith(`"${t}"`))).toBe(true)
  }
  const sources: { where: string; text: string }[] = [
    ...stored.flatMap(({ where, value }) => {
      const text = asText(value)
      // A blocked scope names its range for the operator (fraud status, fraud unblock).
      return text === null || where.endsWith('"fraud_blocks".scope') ? [] : [{ where, text }]
    }),
    ...rx.received.map((r) => ({ where: `event body POSTed (${r.json.type})`, text: r.body })),
    ...h.logs.map((line) => ({ where: 'log line', text: line })),
  ]
  const leaks: string[] = []
  for (const n of numbers) {
    const digits = n.slice(1)
    for (const { where, text } of sources) {
      for (const run of standaloneDigitRuns(text)) {
        // Only what the message says, never the digits: test output is scanned for numbers.
        if (run.length >= 5 && digits.includes(run)) leaks.push(`${where} shows ${run.length} digits in a row of ${maskRecipient(n)}`)
      }
    }
  }
  expect(leaks).toEqual([])
  // The search would see a leak: the blocks' own prefixes are found where they are allowed.
  const blocks = stored.filter((s) => s.where.endsWith('"fraud_blocks".scope')).map((s) => String(s.value))
  expect(blocks.some((scope) => standaloneDigitRuns(scope).some((run) => run.length >= 5 && uz(200).slice(1).includes(run)))).toBe(true)
})
