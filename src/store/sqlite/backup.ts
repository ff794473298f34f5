/**
 * An online backup into one file: `VACUUM INTO` copies the database as one read
 * transaction sees it, while the server goes on writing. The copy goes to a
 * temporary file beside FILE, synced, put in place and the directory synced, so
 * FILE is whole or absent after a crash; without `force` an existing FILE is
 * never replaced (link() fails rather than overwrite). The backup holds hashes
 * under the server secret, which is not in it: without the secret no key works.
 */
import type { Database } from 'bun:sqlite'
import { existsSync, linkSync, renameSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { StoreRefusedError } from '../refused.ts'
import { isLiveDatabase, putPrivateFile, syncDirectory } from './durable-file.ts'

export interface BackupResult {
  /** Absolute path of the backup. */
  file: string
  bytes: number
}

export function backupDatabase(client: Database, databasePath: string, target: string, opts: { force?: boolean } = {}): BackupResult {
  const file = resolve(target)
  const source = resolve(databasePath)
  if (isLiveDatabase(file, source)) throw new StoreRefusedError(`${file} is the live database: back up to another file`)
  if (!opts.force && existsSync(file)) throw exists(file)
  if (!existsSync(dirname(file))) throw new StoreRefusedError(`cannot write the backup ${file}: the directory ${dirname(file)} does not exist`)
  putPrivateFile(
    file,
    'tmp',
    (tmp) => vacuumInto(client, tmp, file),
    (tmp) => place(tmp, file, opts.force === true),
  )
  syncDirectory(dirname(file))
  return { file, bytes: statSync(file).size }
}

function vacuumInto(client: Database, tmp: string, file: string): void {
  try {
    client.run('VACUUM INTO ?', [tmp])
  } catch (err) {
    throw new StoreRefusedError(`cannot write the backup ${file}: ${err instanceof Error ? err.message : String(err)}`)
  }
}

/** With `force` over an existing FILE; without, link() fails rather than overwrite one made meanwhile. */
function place(tmp: string, file: string, force: boolean): void {
  if (force) {
    renameSync(tmp, file)
    return
  }
  try {
    linkSync(tmp, file)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw exists(file)
    throw err
  }
}

function exists(file: string): StoreRefusedError {
  return new StoreRefusedError(`${file} already exists: choose a new name, or pass --force to replace it`)
}
