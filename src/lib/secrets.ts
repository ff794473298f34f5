/**
 * Keyed hashing for everything that must never be stored in clear (API keys,
 * codes, recipients). HMAC-SHA-256 with the server secret: a stolen database
 * alone does not let anyone test guesses offline.
 *
 * The keyed state is set up once and copied per hash (Bun.CryptoHasher): the
 * same HMAC as node:crypto's createHmac, several times cheaper per call, and
 * it runs two or three times on every request.
 */
import { timingSafeEqual } from 'node:crypto'

export class Hasher {
  private readonly keyed: Bun.CryptoHasher

  constructor(secret: Uint8Array) {
    this.keyed = new Bun.CryptoHasher('sha256', secret)
  }

  /** Hex HMAC of `purpose:value`; the purpose keeps hashes of different kinds apart. */
  hash(purpose: string, value: string): string {
    return this.keyed.copy().update(purpose).update('\0').update(value).digest('hex')
  }

  /** The same HMAC as bytes (32). */
  digest(purpose: string, value: string): Buffer {
    return this.keyed.copy().update(purpose).update('\0').update(value).digest()
  }

  /** Constant-time comparison of a fresh hash against a stored one (hex, or bytes). */
  matches(purpose: string, value: string, stored: string | Uint8Array): boolean {
    const fresh = this.digest(purpose, value)
    const known = typeof stored === 'string' ? Buffer.from(stored, 'hex') : stored
    return fresh.length === known.length && timingSafeEqual(fresh, known)
  }
}
