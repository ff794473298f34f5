/**
 * API key format, generation and authentication (docs/api.md#authentication).
 * A key is `otpd_` + 40 base62 characters; the first 8 after `otpd_` are its
 * display prefix, and only an HMAC of the whole key is stored.
 */
import type { Clock } from '../lib/clock.ts'
import { randomBase62 } from '../lib/random.ts'
import type { Hasher } from '../lib/secrets.ts'
import type { Storage } from './ports/index.ts'
import type { ApiKey, StoredKey } from './types.ts'

export const KEY_PREFIX = 'otpd_'
const KEY_BODY_LENGTH = 40
const KEY_SHAPE = /^otpd_[0-9A-Za-z]{32,}$/
export const HASH_PURPOSE_KEY = 'api-key'

export interface NewKey {
  key: string
  prefix: string
  keyHash: string
}

export function generateKey(hasher: Hasher): NewKey {
  const key = KEY_PREFIX + randomBase62(KEY_BODY_LENGTH)
  return { key, prefix: displayPrefix(key), keyHash: hasher.hash(HASH_PURPOSE_KEY, key) }
}

export function displayPrefix(key: string): string {
  return key.slice(KEY_PREFIX.length, KEY_PREFIX.length + 8)
}

export type AuthOutcome = { ok: true; key: ApiKey } | { ok: false; reason: 'invalid' | 'disabled' }

/** How long a looked-up key is trusted: a disable or revoke from another process takes effect within this. */
export const KEY_CACHE_MS = 1_000
/** Entries are existing keys only, so this bounds memory only against a huge key table. */
const KEY_CACHE_MAX = 10_000

/**
 * Authenticates a presented key. Found keys (any status) are cached for
 * KEY_CACHE_MS by their HMAC: the hot path does one HMAC and no query, no key
 * sits in clear in a long-lived structure, and a look-up by an HMAC the attacker
 * cannot compute leaks nothing through timing. An unknown key is never cached,
 * so guessing cannot fill memory. Another process's change (`otpd keys disable`)
 * applies within KEY_CACHE_MS; the requests that miss together share one look-up
 * (docs/benchmarks.md#what-each-design-choice-buys).
 */
export class Authenticator {
  private readonly cache = new Map<string, { key: StoredKey; at: number }>()
  /** Look-ups under way, by HMAC: the requests that miss the cache together share one (its entry is stamped when it began). */
  private readonly pending = new Map<string, Promise<{ key: StoredKey; at: number } | undefined>>()
  /** Moved by forget(): a look-up that began before it answers its own requests but is not cached. */
  private generation = 0

  constructor(
    private readonly storage: Storage,
    private readonly hasher: Hasher,
    private readonly clock: Clock,
  ) {}

  async authenticate(raw: string): Promise<AuthOutcome> {
    if (!KEY_SHAPE.test(raw)) return { ok: false, reason: 'invalid' }
    const hash = this.hasher.hash(HASH_PURPOSE_KEY, raw)
    const now = this.clock.now()
    let entry = this.cache.get(hash)
    if (entry === undefined || now - entry.at >= KEY_CACHE_MS || now < entry.at) {
      entry = await (this.pending.get(hash) ?? this.refresh(hash, raw, now))
      if (entry === undefined) return { ok: false, reason: 'invalid' }
    }
    const stored = entry.key
    // A rotated key past its grace is refused as a revoked one (docs/operating.md#rotating-a-key).
    if (stored.status === 'revoked' || (stored.expiresAt !== null && now >= stored.expiresAt)) return { ok: false, reason: 'invalid' }
    if (stored.status === 'disabled') return { ok: false, reason: 'disabled' }
    const { keyHash: _hash, expiresAt: _expires, ...key } = stored
    return { ok: true, key }
  }

  /** Drops every cached key: the next request of each reads the database again. */
  forget(): void {
    this.cache.clear()
    this.pending.clear()
    this.generation++
  }

  /** Reads the key and caches what is found, stamped `now` (when the read began); an unknown key is dropped. */
  private refresh(hash: string, raw: string, now: number): Promise<{ key: StoredKey; at: number } | undefined> {
    const generation = this.generation
    const p = this.lookUp(raw)
      .then((stored) => {
        if (stored === undefined) {
          this.cache.delete(hash)
          return undefined
        }
        const entry = { key: stored, at: now }
        if (generation !== this.generation) return entry
        if (this.cache.size >= KEY_CACHE_MAX) this.cache.clear()
        this.cache.set(hash, entry)
        return entry
      })
      .finally(() => {
        if (this.pending.get(hash) === p) this.pending.delete(hash)
      })
    this.pending.set(hash, p)
    return p
  }

  private async lookUp(raw: string): Promise<StoredKey | undefined> {
    // Look up by the clear prefix, then compare the HMAC in constant time.
    for (const stored of await this.storage.read((r) => r.keys.findByPrefix(displayPrefix(raw)))) {
      if (this.hasher.matches(HASH_PURPOSE_KEY, raw, stored.keyHash)) return stored
    }
    return undefined
  }
}
