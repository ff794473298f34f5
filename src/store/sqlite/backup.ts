/**
 * An online backup into one file: `VACUUM INTO` copies the database as one read
 * transaction sees it, while the server goes on writing. The copy goes to a
 * temporary file beside FILE, synced, put in place and the directory synced, so
 * FILE is whole or absent after a crash; without `force` an existing FILE is
 * never replaced (link() fails rather than overwrite). The backup holds hashes
 * under the server secret, which is not in it: without the secret no key works.
 */
import type { Database } from 'bun:sqlite'
import { randomBytes } from 'node:crypto'
import { chmodSync, closeSync, existsSync, fsyncSync, linkSync, openSync, renameSync, statSync, unlinkSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { StoreRefusedError } from '../refused.ts'

export interface BackupResult {
  /** Absolute path of the backup. */
  file: string
  bytes: number
}

export function backupDatabase(client: Database, databasePath: string, target: string, opts: { force?: boolean } = {}): BackupResult {
  const file = resolve(target)
  const source = resolve(databasePath)
  if ([source, `${source}-wal`, `${source}-shm`].includes(file)) {
    throw new StoreRefusedError(`${file} is the live database: back up to another file`)
  }
  if (!opts.force && existsSync(file)) throw exists(file)
  if (!existsSync(dirname(file))) throw new StoreRefusedError(`cannot write the backup ${file}: the directory ${dirname(file)} does not exist`)
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`)
  try {
    try {
      client.run('VACUUM INTO ?', [tmp])
    } catch (err) {
      throw new StoreRefusedError(`cannot write the backup ${file}: ${err instanceof Error ? err.message : String(err)}`)
    }
    // As private as the data directory: it holds every hash the database does.
    chmodSync(tmp, 0o600)
    syncFile(tmp)
    if (opts.force) {
      renameSync(tmp, file)
    } else {
      try {
        linkSync(tmp, file)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw exists(file)
        throw err
      }
    }
    syncDirectory(dirname(file))
  } finally {
    if (existsSync(tmp)) unlinkSync(tmp)
  }
  return { file, bytes: statSync(file).size }
}

function exists(file: string): StoreRefusedError {
  return new StoreRefusedError(`${file} already exists: choose a new name, or pass --force to replace it`)
}

function syncFile(path: string): void {
  const fd = openSync(path, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

function syncDirectory(dir: string): void {
  try {
    syncFile(dir)
  } catch {
    // Some filesystems cannot fsync a directory; the file itself is flushed.
  }
}
