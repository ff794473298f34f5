/** Database facts for /metrics: how large are its files. */
import { statSync } from 'node:fs'

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
