/**
 * API key format, generation and authentication (DECISIONS.md section 2).
 * A key is `otpd_` + 40 base62 characters; the first 8 after `otpd_` are its
 * display prefix, and only an HMAC of the whole key is stored.
 */
import { randomBase62 } from '../lib/random.ts'
import type { Hasher } from '../lib/secrets.ts'
import type { KeyStore } from './ports.ts'
import type { ApiKey } from './types.ts'

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

export class Authenticator {
  constructor(
    private readonly keys: KeyStore,
    private readonly hasher: Hasher,
  ) {}

  authenticate(raw: string): AuthOutcome {
    if (!KEY_SHAPE.test(raw)) return { ok: false, reason: 'invalid' }
    // Look up by the clear prefix, then compare the HMAC in constant time.
    for (const stored of this.keys.findByPrefix(displayPrefix(raw))) {
      if (!this.hasher.matches(HASH_PURPOSE_KEY, raw, stored.keyHash)) continue
      if (stored.status === 'revoked') return { ok: false, reason: 'invalid' }
      if (stored.status === 'disabled') return { ok: false, reason: 'disabled' }
      const { keyHash: _hash, ...key } = stored
      return { ok: true, key }
    }
    return { ok: false, reason: 'invalid' }
  }
}
