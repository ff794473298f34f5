/**
 * Start checks: a store that fails safe. Each refuses to open, in one sentence
 * naming the path and the fix (the CLI's one line), rather than start in a state
 * that fails later or silently: a database or directory otpd cannot write, one
 * it cannot open, a schema from a newer otpd, or a server secret other than the
 * one the database was made with, or none where one is needed (a new secret
 * would make every stored key hash invalid while `keys list` shows them active).
 */
import { Database } from 'bun:sqlite'
import { accessSync, constants, existsSync } from 'node:fs'
import { basename, dirname } from 'node:path'
import { Hasher } from '../../lib/secrets.ts'
import { VerificationIds } from '../../lib/verification-id.ts'
import { migrationJournal } from './migrations/index.ts'
import { loadSecret, sameHex, secretFingerprint, secretPath, type ConfiguredSecret } from '../secret.ts'
import { StoreRefusedError } from '../refused.ts'

export { secretFingerprint }

/** Runs part of an open, so that any SQLite error it throws names the database. */
export function namingPath<T>(path: string, step: () => T): T {
  try {
    return step()
  } catch (err) {
    if (err instanceof StoreRefusedError) throw err
    throw new StoreRefusedError(`cannot open the database ${path}: ${err instanceof Error ? err.message : String(err)}`)
  }
}

/**
 * The database file, when it exists, and its directory must be writable:
 * SQLite opens a read-only file read-only without a word, and in WAL mode it
 * even commits into the -wal file beside an immutable database, which then
 * can never be checkpointed. access() sees read-only mounts, immutable files
 * and permissions, for root too.
 */
export function checkWritable(path: string): void {
  const dir = dirname(path)
  if (existsSync(path)) {
    const problem = accessProblem(path, constants.R_OK | constants.W_OK)
    if (problem) throw new StoreRefusedError(`the database ${path} is not writable (${problem}): otpd must be able to write it and its directory`)
  }
  const problem = accessProblem(dir, constants.W_OK | constants.X_OK)
  if (problem) {
    const name = basename(path)
    throw new StoreRefusedError(`the database directory ${dir} is not writable (${problem}): otpd must create ${name}-wal and ${name}-shm beside ${name} there`)
  }
}

/**
 * Refuses a database another process has open: a running `otpd serve` (or a
 * command still at work) would go on writing after a copy or a move took its
 * snapshot, and those writes would be lost. In WAL mode every open connection
 * holds a shared lock on the file, so an exclusive lock asked for without
 * waiting is refused exactly while another connection exists; the lock is
 * released at once (closing the probe), and a process that died holds none.
 */
export function checkNotInUse(path: string, what: string): void {
  const probe = namingPath(path, () => new Database(path, { readwrite: true, create: false }))
  try {
    probe.run('PRAGMA busy_timeout = 0')
    probe.run('PRAGMA locking_mode = EXCLUSIVE')
    probe.run('BEGIN EXCLUSIVE')
    probe.run('ROLLBACK')
  } catch (err) {
    if (/locked|busy/i.test(err instanceof Error ? err.message : String(err))) {
      throw new StoreRefusedError(
        `${path} is open in another process (a running otpd serve, or a command still at work): stop otpd first (systemctl stop otpd), then ${what}`,
      )
    }
    throw new StoreRefusedError(`cannot open the database ${path}: ${err instanceof Error ? err.message : String(err)}`)
  } finally {
    probe.close()
  }
}

function accessProblem(path: string, mode: number): string | undefined {
  try {
    accessSync(path, mode)
    return undefined
  } catch (err) {
    const e = err as NodeJS.ErrnoException
    // "EROFS: read-only file system, access '/x'" -> "read-only file system"
    return /^[A-Z]+: ([^,]+)/.exec(e.message)?.[1] ?? e.code ?? String(err)
  }
}

/**
 * Refuses a database that has a migration newer than the newest this binary
 * embeds, before anything is applied: the applied migrations are recorded by
 * their journal time (`created_at`), as store/sqlite/db.ts applyMigrations writes them.
 */
export function checkSchemaNotNewer(client: Database, path: string): void {
  const table = client.query<{ n: number }, []>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get()
  if (!table?.n) return
  const row = client.query<{ at: number | null }, []>('SELECT max(created_at) AS at FROM "__drizzle_migrations"').get()
  const newest = migrationJournal.entries.at(-1)?.when ?? 0
  const at = Number(row?.at ?? 0)
  if (at > newest) {
    throw new StoreRefusedError(`${path} has schema changes from a newer otpd (migration of ${new Date(at).toISOString()}): upgrade otpd`)
  }
}

const FINGERPRINT = 'secret_fingerprint'

/**
 * Loads the server secret (`server.secret`, else the file beside the database:
 * secret.ts) and checks it against the database's fingerprint. Only a database
 * with no fingerprint and no API keys gets a new secret; one from before
 * fingerprints takes its first open's, once its newest verification id reads
 * back under it (idsReadWith). Under the write lock, so a CLI and a server
 * agree on one secret, and the file is synced before its fingerprint commits.
 */
export function loadCheckedSecret(client: Database, configured: ConfiguredSecret | undefined, databasePath: string): Uint8Array {
  if (databasePath === ':memory:') return loadSecret(configured?.bytes, databasePath)
  const file = secretPath(databasePath)
  const decide = client.transaction((): Uint8Array => {
    const stored = client.query<{ value: string }, [string]>('SELECT value FROM settings WHERE name = ?').get(FINGERPRINT)?.value
    if (configured === undefined && !existsSync(file)) {
      const keys = client.query<{ n: number }, []>('SELECT count(*) AS n FROM api_keys').get()?.n ?? 0
      if (stored !== undefined || keys > 0) {
        const holds = keys > 0 ? `holds ${keys} API key${keys === 1 ? '' : 's'} made with it` : 'was made with it'
        throw new StoreRefusedError(
          `the server secret ${file} is missing, but ${databasePath} ${holds}: restore ${basename(file)} from the backup taken with this database (a new secret would make every key invalid)`,
        )
      }
    }
    const secret = loadOrRefuse(configured, databasePath)
    const fingerprint = secretFingerprint(secret)
    const matches = stored === undefined ? idsReadWith(client, secret) : sameHex(stored, fingerprint)
    if (!matches) {
      throw new StoreRefusedError(
        configured?.source === 'server.secret'
          ? `the server.secret setting does not match the secret ${databasePath} was made with: set server.secret back to the value used with this database (a new secret would make every key invalid)`
          : configured !== undefined
            ? `${configured.source} does not hold the secret ${databasePath} was made with: give it the secret used with this database (a new secret would make every key invalid)`
            : `the server secret ${file} does not match the secret ${databasePath} was made with: restore ${basename(file)} from the backup taken with this database (a new secret would make every key invalid)`,
      )
    }
    if (stored === undefined) client.run('INSERT INTO settings (name, value) VALUES (?, ?)', [FINGERPRINT, fingerprint])
    return secret
  })
  try {
    return namingPath(databasePath, () => decide.immediate())
  } catch (err) {
    // Nothing may go on with a database whose hashes it cannot check.
    client.close()
    throw err
  }
}

/**
 * For a database from before fingerprints: its newest verification id, when
 * it has one (not one made before ids carried their row number), must name
 * its own row under this secret (lib/verification-id.ts). 48 bits of HMAC:
 * another secret passes with odds of 1 in 2^48. With no such row there is
 * nothing to check against, and the secret present is taken as the one.
 */
export function idsReadWith(client: Database, secret: Uint8Array): boolean {
  const row = client
    .query<{ seq: number; id: string }, []>(
      'SELECT v.seq, v.id FROM verifications v WHERE NOT EXISTS (SELECT 1 FROM verification_legacy_ids l WHERE l.seq = v.seq) ORDER BY v.seq DESC LIMIT 1',
    )
    .get()
  return !row || new VerificationIds(new Hasher(secret)).seqOf(row.id) === row.seq
}

/** A secret file that cannot be read or is not valid: its own message names it. */
function loadOrRefuse(configured: ConfiguredSecret | undefined, databasePath: string): Uint8Array {
  try {
    return loadSecret(configured?.bytes, databasePath)
  } catch (err) {
    throw new StoreRefusedError(err instanceof Error ? err.message : String(err))
  }
}
