/**
 * Keyed hashing for everything that must never be stored in clear (API keys,
 * codes, recipients). HMAC-SHA-256 with the server secret: a stolen database
 * alone does not let anyone test guesses offline.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

export class Hasher {
  constructor(private readonly secret: Uint8Array) {}

  /** Hex HMAC of `purpose:value`; the purpose keeps hashes of different kinds apart. */
  hash(purpose: string, value: string): string {
    return createHmac('sha256', this.secret).update(purpose).update('\0').update(value).digest('hex')
  }

  /** Constant-time comparison of a fresh hash against a stored one. */
  matches(purpose: string, value: string, stored: string): boolean {
    const fresh = Buffer.from(this.hash(purpose, value), 'hex')
    const known = Buffer.from(stored, 'hex')
    return fresh.length === known.length && timingSafeEqual(fresh, known)
  }
}
