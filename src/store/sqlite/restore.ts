/**
 * `otpd restore FILE` (docs/operating.md#backup-and-restore): puts a backup
 * in the place of the database, as the manual steps did, with their checks
 * made first. Refused while another process has the database open (a running
 * server would go on writing to the file it holds), and when the backup was
 * not made with the secret it will be used with. The database it replaces is
 * kept beside it, never deleted: a restore can be undone by hand.
 */
import { Database } from 'bun:sqlite'
import { chownSync, copyFileSync, existsSync, mkdirSync, renameSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { StoreRefusedError } from '../refused.ts'
import { readSecretFile, sameHex, secretFingerprint, secretPath, type ConfiguredSecret } from '../secret.ts'
import { isLiveDatabase, putPrivateFile, syncDirectory, syncFile } from './durable-file.ts'
import { checkNotInUse, checkSchemaNotNewer, idsReadWith } from './start-checks.ts'

export interface RestoreOptions {
  /** The backup. */
  file: string
  /** `database.path`. */
  databasePath: string
  /** The secret the config gives (`server.secret`, `_env`, `_file`), if any. */
  configured: ConfiguredSecret | undefined
  /** `--secret FILE`: the `otpd.secret` kept with the backup (only where the config gives none). */
  secretFile?: string
  /** Names the moved-aside files: the time of the restore. */
  now: number
}

export interface RestoreResult {
  database: string
  /** Where the database it replaced now is, when there was one. */
  replaced: string | null
  /** Where the secret it uses is: the setting, or the file beside the database. */
  secret: string
  keys: number
}

export function restoreDatabase(o: RestoreOptions): RestoreResult {
  const target = resolve(o.databasePath)
  const file = resolve(o.file)
  if (isLiveDatabase(file, target)) throw new StoreRefusedError(`${file} is the live database: restore from a backup file`)
  if (!existsSync(file)) throw new StoreRefusedError(`no backup at ${file}`)
  if (existsSync(target)) checkNotInUse(target, 'run otpd restore again')
  const { secret, source, copyFrom } = secretFor(o, target)
  const keys = checkBackup(file, secret, source)
  const stamp = new Date(o.now).toISOString().replaceAll(':', '-')
  const replaced = existsSync(target) ? `${target}.before-restore-${stamp}` : null
  mkdirSync(dirname(target), { recursive: true, mode: 0o700 })
  putPrivateFile(
    target,
    'restore',
    (tmp) => copyFileSync(file, tmp),
    (tmp) => {
      if (replaced !== null) {
        // The database with its -wal and -shm, as one: SQLite finds a WAL by the database's name.
        for (const suffix of ['', '-wal', '-shm']) if (existsSync(target + suffix)) renameSync(target + suffix, replaced + suffix)
      }
      renameSync(tmp, target)
    },
  )
  if (copyFrom !== undefined) {
    const path = secretPath(target)
    if (existsSync(path)) renameSync(path, `${path}.before-restore-${stamp}`)
    copyFileSync(copyFrom, path)
    syncFile(path)
  }
  syncDirectory(dirname(target))
  ownLikeDirectory(target, copyFrom === undefined ? [] : [secretPath(target)])
  return { database: target, replaced, secret: source, keys }
}

/** The secret the restored database will be opened with, and where it comes from; refuses when there is none. */
function secretFor(o: RestoreOptions, target: string): { secret: Uint8Array; source: string; copyFrom?: string } {
  if (o.configured !== undefined) {
    if (o.secretFile !== undefined)
      throw new StoreRefusedError(
        `the config gives the server secret (${o.configured.source}): --secret is for a deployment that keeps otpd.secret beside the database`,
      )
    return { secret: o.configured.bytes, source: o.configured.source }
  }
  if (o.secretFile !== undefined) return { secret: fileSecret(o.secretFile), source: secretPath(target), copyFrom: resolve(o.secretFile) }
  const beside = secretPath(target)
  if (existsSync(beside)) return { secret: fileSecret(beside), source: beside }
  throw new StoreRefusedError(`there is no server secret at ${beside}: pass --secret FILE, the otpd.secret kept with the backup`)
}

function fileSecret(path: string): Uint8Array {
  try {
    return readSecretFile(path)
  } catch (err) {
    throw new StoreRefusedError(err instanceof Error ? err.message : String(err))
  }
}

/** The backup is an otpd database this binary can open, whole, and made with `secret`; answers its API keys. */
function checkBackup(file: string, secret: Uint8Array, source: string): number {
  let db: Database
  try {
    db = new Database(file, { readonly: true })
  } catch (err) {
    throw new StoreRefusedError(`${file} cannot be opened as a database: ${err instanceof Error ? err.message : String(err)}`)
  }
  try {
    const check = () => db.query<{ quick_check: string }, []>('PRAGMA quick_check').get()?.quick_check
    let ok: string | undefined
    try {
      ok = check()
    } catch (err) {
      throw new StoreRefusedError(`${file} is not an otpd backup: ${err instanceof Error ? err.message : String(err)}`)
    }
    if (ok !== 'ok') throw new StoreRefusedError(`${file} is damaged (${ok}): restore another backup`)
    const tables = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('api_keys', 'settings')").all()
    if (tables.length < 2) throw new StoreRefusedError(`${file} is not an otpd backup (it has no api_keys and settings tables)`)
    checkSchemaNotNewer(db, file)
    const stored = db.query<{ value: string }, []>("SELECT value FROM settings WHERE name = 'secret_fingerprint'").get()?.value
    if (!(stored === undefined ? idsReadWith(db, secret) : sameHex(stored, secretFingerprint(secret))))
      throw new StoreRefusedError(
        `${file} was not made with the secret in ${source}: give the secret kept with this backup (--secret FILE, or the config's server.secret as it was then)`,
      )
    return db.query<{ n: number }, []>('SELECT count(*) AS n FROM api_keys').get()?.n ?? 0
  } finally {
    db.close()
  }
}

/** Run as root, the new files get the data directory's owner, so the service (`otpd`) can open them. */
function ownLikeDirectory(database: string, others: string[]): void {
  if (process.getuid?.() !== 0) return
  const { uid, gid } = statSync(dirname(database))
  for (const path of [database, ...others]) chownSync(path, uid, gid)
}
