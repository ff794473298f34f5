/**
 * What backup and restore share: a database file put in place whole. It is
 * written under a temporary name beside its place, made private and synced
 * before it takes its name, so after a crash the name holds the old file or
 * the whole new one, never a part.
 */
import { randomBytes } from 'node:crypto'
import { chmodSync, closeSync, existsSync, fsyncSync, openSync, unlinkSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'

/** Whether `file` is the database at `database` or one of its -wal and -shm files (both absolute). */
export function isLiveDatabase(file: string, database: string): boolean {
  return [database, `${database}-wal`, `${database}-shm`].includes(file)
}

/**
 * `write` fills a temporary file beside `target` (its name ends in `.suffix`),
 * which is then made private and synced, and `place` gives it its name; the
 * temporary name is gone when this returns or throws. The directory is not
 * synced here: the caller does, once all it puts there is in place.
 */
export function putPrivateFile(target: string, suffix: string, write: (tmp: string) => void, place: (tmp: string) => void): void {
  const tmp = join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.${suffix}`)
  try {
    write(tmp)
    // As private as the data directory: it holds every hash the database does.
    chmodSync(tmp, 0o600)
    syncFile(tmp)
    place(tmp)
  } finally {
    if (existsSync(tmp)) unlinkSync(tmp)
  }
}

export function syncFile(path: string): void {
  const fd = openSync(path, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

export function syncDirectory(dir: string): void {
  try {
    syncFile(dir)
  } catch {
    // Some filesystems cannot fsync a directory; the files themselves are flushed.
  }
}
