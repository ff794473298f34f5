/**
 * CSPRNG helpers. Both use rejection sampling, so every digit or character is
 * exactly uniform (no modulo bias, DECISIONS.md section 4).
 */
import { randomBytes } from 'node:crypto'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

function uniformIndexes(count: number, alphabet: number): number[] {
  // Largest multiple of `alphabet` that fits in a byte: bytes at or above it are discarded.
  const limit = 256 - (256 % alphabet)
  const out: number[] = []
  while (out.length < count) {
    for (const b of randomBytes(count * 2)) {
      if (b < limit) out.push(b % alphabet)
      if (out.length === count) break
    }
  }
  return out
}

export function randomDigits(length: number): string {
  return uniformIndexes(length, 10).join('')
}

export function randomBase62(length: number): string {
  return uniformIndexes(length, 62)
    .map((i) => BASE62[i])
    .join('')
}

export function randomUuid(): string {
  return crypto.randomUUID()
}
