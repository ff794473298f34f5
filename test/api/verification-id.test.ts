/**
 * Verification ids that carry their row number (lib/verification-id.ts):
 * still lower-case v4 UUIDs that look random (docs/api.md#verification-states), the
 * number read back only with the server secret, and through the API an id
 * altered to name another row finds nothing.
 */
import { describe, expect, test } from 'bun:test'
import { Hasher } from '../../src/lib/secrets.ts'
import { MAX_SEQ, VerificationIds } from '../../src/lib/verification-id.ts'
import { harnessPerTest, ON_PG, UUID_V4 } from '../kit/harness.ts'

const ids = new VerificationIds(new Hasher(Buffer.from('a'.repeat(64), 'hex')))

describe('the codec', () => {
  test('every id is a lower-case v4 UUID that gives back its row number', () => {
    for (const seq of [1, 2, 255, 256, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 123_456_789_012, MAX_SEQ]) {
      const id = ids.make(seq)
      expect(id).toMatch(UUID_V4)
      expect(ids.seqOf(id)).toBe(seq)
    }
    for (let i = 0; i < 2_000; i++) {
      const seq = 1 + Math.floor(Math.random() * MAX_SEQ)
      expect(ids.seqOf(ids.make(seq))).toBe(seq)
    }
  })

  test('ids of consecutive rows look random: all distinct, and every bit of the part that carries the number set about half the time', () => {
    const n = 4_000
    const made = Array.from({ length: n }, (_, i) => ids.make(i + 1))
    expect(new Set(made).size).toBe(n)
    // The tail (48 bits) holds the row number masked; unmasked, its top bits
    // would be 0 for every one of these small numbers.
    const ones = new Array<number>(48).fill(0)
    for (const id of made) {
      const tail = BigInt(`0x${id.slice(24)}`)
      for (let b = 0; b < 48; b++) if ((tail >> BigInt(b)) & 1n) ones[b]!++
    }
    // n = 4000 fair coins: mean 2000, sd about 32; 1700..2300 is over 9 sd.
    for (const count of ones) {
      expect(count).toBeGreaterThan(1_700)
      expect(count).toBeLessThan(2_300)
    }
  })

  test('the same id read with another secret names another row', () => {
    const other = new VerificationIds(new Hasher(Buffer.from('b'.repeat(64), 'hex')))
    const id = ids.make(42)
    expect(other.seqOf(id)).not.toBe(42)
  })

  test.each([
    ['upper case', (id: string) => id.toUpperCase()],
    ['another version', (id: string) => `${id.slice(0, 14)}1${id.slice(15)}`],
    ['another variant', (id: string) => `${id.slice(0, 19)}c${id.slice(20)}`],
    ['no dashes', (id: string) => id.replaceAll('-', '')],
    ['a character short', (id: string) => id.slice(0, -1)],
    ['a character more', (id: string) => `${id}0`],
    ['surrounded by spaces', (id: string) => ` ${id} `],
  ])('a string that is not such an id names no row: %s', (_, alter) => {
    expect(ids.seqOf(alter(ids.make(7)))).toBeNull()
  })

  test('row numbers outside 1..2^48-1 are refused', () => {
    for (const seq of [0, -1, 1.5, MAX_SEQ + 1, Number.NaN]) expect(() => ids.make(seq)).toThrow(RangeError)
  })
})

describe('through the API', () => {
  const start = harnessPerTest()

  test('an id altered to name another row of the same key is not found, and that row is untouched', async () => {
    const h = await start({ credits: 10 })
    const a = await h.send({ channel: 'sms', recipient: '+14155550101', code: '111111' })
    const b = await h.send({ channel: 'sms', recipient: '+14155550102', code: '222222' })
    const codec = new VerificationIds(h.server.hasher)
    const seqA = codec.seqOf(a.json.verification_id)!
    const seqB = codec.seqOf(b.json.verification_id)!
    expect(seqB).toBe(seqA + 1)
    // A's random head, with a tail that reads back as B's row.
    const headA = (a.json.verification_id as string).slice(0, 23)
    const tailOfA = BigInt(`0x${(a.json.verification_id as string).slice(24)}`)
    const forged = `${headA}-${(tailOfA ^ BigInt(seqA) ^ BigInt(seqB)).toString(16).padStart(12, '0')}`
    expect(codec.seqOf(forged)).toBe(seqB)
    const r = await h.verify({ verification_id: forged, code: '222222' })
    expect(r.status).toBe(404)
    expect(r.json.error).toBe('Verification not found')
    // B itself still verifies, once.
    expect((await h.verify({ verification_id: b.json.verification_id, code: '222222' })).json.message).toBe('Code verified successfully')
  })

  test('a send refused after drawing its row number: SQLite gives the number to the next send; PostgreSQL leaves it unused', async () => {
    const h = await start({ credits: 10, config: { limits: { recipient_per_minute: 1 } } })
    const codec = new VerificationIds(h.server.hasher)
    const a = await h.send({ channel: 'sms', recipient: '+14155550101' })
    // Refused by a per-recipient limit, checked after the number is drawn (src/otp/send.ts).
    const refused = await h.send({ channel: 'sms', recipient: '+14155550101' })
    expect(refused.status).toBe(429)
    const b = await h.send({ channel: 'sms', recipient: '+14155550102' })
    expect(b.status).toBe(200)
    const seqA = codec.seqOf(a.json.verification_id)!
    // SQLite's one writer takes a number only with its row; PostgreSQL's sequence never gives one twice.
    expect(codec.seqOf(b.json.verification_id)).toBe(ON_PG ? seqA + 2 : seqA + 1)
  })
})
