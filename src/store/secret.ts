/**
 * The server secret keys every stored hash (API keys, codes, recipients). It
 * comes from `server.secret`, or is generated once into the data directory as
 * `otpd.secret` with mode 0600. Lose it and every API key stops working: back
 * it up with the database.
 */
import { randomBytes } from 'node:crypto'
import { chmodSync, closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs'
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
  if (!existsSync(path)) createSecretFile(path)
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600)
  const hex = readFileSync(path, 'utf8').trim()
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`${path} is not a valid otpd secret (expected 64 hex characters)`)
  return Buffer.from(hex, 'hex')
}

/**
 * Writes a new secret to a private temporary file, flushes it, then links it
 * into place. The name appears with its whole content or not at all: a process
 * starting at the same moment never reads an empty file, a crash never leaves
 * a half-written one, and after a power loss the secret is on disk before any
 * key hashed with it is. link() fails when another process won the race; its
 * secret is then the one used.
 */
function createSecretFile(path: string): void {
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
  const fd = openSync(tmp, 'wx', 0o600)
  try {
    writeSync(fd, randomBytes(32).toString('hex') + '\n')
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  try {
    linkSync(tmp, path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  } finally {
    unlinkSync(tmp)
  }
  try {
    const dir = openSync(dirname(path), 'r')
    try {
      fsyncSync(dir)
    } finally {
      closeSync(dir)
    }
  } catch {
    // Some filesystems cannot fsync a directory; the file itself is flushed.
  }
}
