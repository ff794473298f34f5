/**
 * The server secret keys every stored hash (API keys, codes, recipients). It
 * comes from `server.secret`, `server.secret_env` or `server.secret_file`, or
 * (SQLite only) is generated once into the data directory as `otpd.secret`
 * with mode 0600. Lose it and every API key stops working: back it up with
 * the database. Engine-agnostic: both engines read it here.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { chmodSync, closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { accessMessage, isAccessError } from '../lib/fs-errors.ts'

export const SECRET_FILE = 'otpd.secret'

export function secretPath(databasePath: string): string {
  return join(dirname(databasePath), SECRET_FILE)
}

/** A secret the config gives, and how to name its source in a sentence. */
export interface ConfiguredSecret {
  bytes: Uint8Array
  /** 'server.secret', or where the value came from: "the variable X (server.secret_env)". */
  source: string
}

/**
 * The secret the config gives, if any: `server.secret` and `secret_env` are
 * used as their UTF-8 bytes, `secret_file` is read like the generated
 * `otpd.secret` (64 hex characters), so a SQLite deployment's file can be
 * copied to every node. The config check has made sure at most one is set.
 */
export function configuredSecret(
  server: { secret?: string; secret_env?: string; secret_file?: string },
  env: Record<string, string | undefined>,
): ConfiguredSecret | undefined {
  if (server.secret !== undefined) return { bytes: Buffer.from(server.secret, 'utf8'), source: 'server.secret' }
  if (server.secret_env !== undefined) {
    const value = env[server.secret_env]
    if (value === undefined || value === '') throw new Error(`server.secret_env names ${server.secret_env}, which is not set`)
    return { bytes: Buffer.from(value, 'utf8'), source: `the variable ${server.secret_env} (server.secret_env)` }
  }
  if (server.secret_file !== undefined) return { bytes: readSecretFile(server.secret_file), source: `the file ${server.secret_file} (server.secret_file)` }
  return undefined
}

/** A file in the generated secret's format: 64 hex characters (and a newline). */
export function readSecretFile(path: string): Uint8Array {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    if (isAccessError(err)) throw new Error(accessMessage('read the server secret file', path, err, 'to read it'))
    throw new Error(`cannot read the server secret file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`)
  }
  const hex = text.trim()
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`${path} is not a valid otpd secret (expected 64 hex characters)`)
  return Buffer.from(hex, 'hex')
}

export function loadSecret(configured: string | Uint8Array | undefined, databasePath: string): Uint8Array {
  if (typeof configured === 'string') return Buffer.from(configured, 'utf8')
  if (configured !== undefined) return configured
  if (databasePath === ':memory:') return randomBytes(32)
  const path = secretPath(databasePath)
  mkdirSync(dirname(path), { recursive: true })
  if (!existsSync(path)) createSecretFile(path)
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600)
  let hex: string
  try {
    hex = readFileSync(path, 'utf8').trim()
  } catch (err) {
    // Usually a secret made by a command run as root, beside a database the service owns.
    if (isAccessError(err)) throw new Error(accessMessage('read the server secret', path, err, 'to read and write it, like the database beside it'))
    throw err
  }
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

const FINGERPRINT_LABEL = 'otpd server secret fingerprint v1'

/**
 * HMAC-SHA256 of a fixed label, keyed by the secret. It says whether two
 * secrets are the same and nothing else: HMAC is a pseudorandom function, so
 * without the key its output is unrelated to it, and a generated secret (256
 * random bits) cannot be searched for. A configured `server.secret` chosen by
 * a person could be guessed offline against it, but no better than against
 * the code and key hashes the database already holds under the same secret.
 */
export function secretFingerprint(secret: Uint8Array): string {
  return createHmac('sha256', secret).update(FINGERPRINT_LABEL).digest('hex')
}

/** Two hex fingerprints are the same (constant time). */
export function sameHex(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex')
  const y = Buffer.from(b, 'hex')
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y)
}
