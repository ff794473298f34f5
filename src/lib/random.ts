/**
 * CSPRNG helpers. Both use rejection sampling, so every digit or character is
 * exactly uniform (no modulo bias, docs/api.md#verification-states).
 */

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/**
 * CSPRNG bytes drawn from a pool filled 4 KiB at a time: one getrandom call
 * per few hundred codes instead of one per code. Each byte is used once.
 */
const pool = new Uint8Array(4096)
let used = pool.length

function nextByte(): number {
  if (used === pool.length) {
    crypto.getRandomValues(pool)
    used = 0
  }
  return pool[used++]!
}

function uniformIndexes(count: number, alphabet: number): number[] {
  // Largest multiple of `alphabet` that fits in a byte: bytes at or above it are discarded.
  const limit = 256 - (256 % alphabet)
  const out: number[] = []
  while (out.length < count) {
    const b = nextByte()
    if (b < limit) out.push(b % alphabet)
  }
  return out
}

export function randomDigits(length: number): string {
  // Digits: 250 = 25 x 10, so bytes 250-255 are discarded.
  let s = ''
  while (s.length < length) {
    const b = nextByte()
    if (b < 250) s += String.fromCharCode(48 + (b % 10))
  }
  return s
}

export function randomBase62(length: number): string {
  return uniformIndexes(length, 62)
    .map((i) => BASE62[i])
    .join('')
}

export function randomUuid(): string {
  return crypto.randomUUID()
}
