/**
 * Database facts for /readyz and /metrics: can it take a write, and how large
 * are its files.
 */
import type { Database } from 'bun:sqlite'
import { statSync } from 'node:fs'

/**
 * Commits a one-page write (the header's user_version, rewritten with its own
 * value): a lock alone would not notice a read-only file system or a full
 * disk, which only fail when a write reaches the file. Throws when it cannot.
 */
export function probeWritable(client: Database): void {
  client
    .transaction(() => {
      const row = client.query<{ user_version: number }, []>('PRAGMA user_version').get()
      client.run(`PRAGMA user_version = ${Math.trunc(row?.user_version ?? 0)}`)
    })
    .immediate()
}

/** Sizes of the database file and its write-ahead log (0 when absent). */
export function databaseFileSizes(path: string): { file: 'database' | 'wal'; bytes: number }[] {
  if (path === ':memory:') return []
  return [
    { file: 'database', bytes: fileSize(path) },
    { file: 'wal', bytes: fileSize(`${path}-wal`) },
  ]
}

/** A file's size in bytes, 0 when it does not exist (a WAL is removed by a clean close). */
export function fileSize(path: string): number {
  try {
    return statSync(path).size
  } catch {
    return 0
  }
}
