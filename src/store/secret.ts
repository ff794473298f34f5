/**
 * The server secret keys every stored hash (API keys, codes, recipients). It
 * comes from `server.secret`, or is generated once into the data directory as
 * `otpd.secret` with mode 0600. Lose it and every API key stops working: back
 * it up with the database.
 */
import { randomBytes } from 'node:crypto'
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from 'node:fs'
import { dirname, join } from 'node:path'

export const SECRET_FILE = 'otpd.secret'

export function secretPath(databasePath: string): string {
  return join(dirname(databasePath), SECRET_FILE)
}

export function loadSecret(configured: string | undefined, databasePath: string): Uint8Array {
  if (configured !== undefined) return Buffer.from(configured, 'utf8')
  if (databasePath === ':memory:') return randomBytes(32)
  const path = secretPath(databasePath)
  mkdirSync(dirname(path), { recursive: true })
  try {
    // 'wx': exactly one process creates it, even when a CLI and the server start together.
    const fd = openSync(path, 'wx', 0o600)
    try {
      writeSync(fd, randomBytes(32).toString('hex') + '\n')
    } finally {
      closeSync(fd)
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  }
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600)
  const hex = readFileSync(path, 'utf8').trim()
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`${path} is not a valid otpd secret (expected 64 hex characters)`)
  return Buffer.from(hex, 'hex')
}
