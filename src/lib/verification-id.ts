/**
 * Verification ids: random v4 UUIDs, lower case (docs/api.md#verification-states),
 * that also name their row, so verify finds it by an integer key and no index
 * of random ids costs a page write per send. An id is `head-tail`: the head is
 * the start of a fresh `crypto.randomUUID()` (74 random bits), the tail the row
 * number XORed with 48 bits of an HMAC of the head under the server secret, so
 * without the secret the id is indistinguishable from a random v4 UUID and says
 * nothing of how many verifications exist. The store also compares the id kept
 * in that row: an altered or invented id finds nothing (404).
 */
import type { Hasher } from './secrets.ts'

const HASH_PURPOSE = 'verification-id'
/** A lower-case v4 UUID: every verification id has this shape (the API schema publishes it too). */
export const ID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const HEAD_LENGTH = 23
const TWO_32 = 2 ** 32
/** Row numbers fit in the 48-bit tail. */
export const MAX_SEQ = 2 ** 48 - 1

export class VerificationIds {
  /** `purpose`: another one makes another family of ids (event ids, store/sqlite/event-store.ts). */
  constructor(
    private readonly hasher: Hasher,
    private readonly purpose = HASH_PURPOSE,
  ) {}

  /** A fresh id naming row `seq`. */
  make(seq: number): string {
    if (!Number.isInteger(seq) || seq < 1 || seq > MAX_SEQ) throw new RangeError(`row number out of range: ${seq}`)
    const head = crypto.randomUUID().slice(0, HEAD_LENGTH)
    return `${head}-${this.mask(head, seq).toString(16).padStart(12, '0')}`
  }

  /** The row number an id names, or null when the string is not an id of this form. */
  seqOf(id: string): number | null {
    if (!ID_SHAPE.test(id)) return null
    const head = id.slice(0, HEAD_LENGTH)
    return this.mask(head, Number.parseInt(id.slice(HEAD_LENGTH + 1), 16))
  }

  /** `n` XOR the first 48 bits of the head's HMAC (its own inverse). */
  private mask(head: string, n: number): number {
    const h = this.hasher.digest(this.purpose, head)
    const hi = ((h[0]! << 8) | h[1]!) ^ Math.floor(n / TWO_32)
    const lo = (((h[2]! << 24) | (h[3]! << 16) | (h[4]! << 8) | h[5]!) ^ n) >>> 0
    return hi * TWO_32 + lo
  }
}
