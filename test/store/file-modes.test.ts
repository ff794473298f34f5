/**
 * Database file modes (docs/operating.md#data-and-secrets): a new SQLite
 * database, its -wal and its -shm are 0600 whatever the umask, as the secret
 * is; an existing file other users may read is named, with its absolute
 * path and mode, in a warning of the start log. Real files in a temp dir,
 * under the umask most systems give (022).
 */
import { beforeEach, expect } from 'bun:test'
import { chmodSync, existsSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { SqliteEngine } from '../../src/store/sqlite/engine.ts'
import { afterTest, tempDir } from '../kit/cleanup.ts'
import { cliEnv, startServer } from '../kit/cli.ts'
import { testSqliteOnly } from '../kit/harness.ts'

beforeEach(() => {
  const umask = process.umask(0o022)
  afterTest(() => process.umask(umask))
})

const mode = (f: string) => statSync(f).mode & 0o777
const FILES = (db: string) => [db, `${db}-wal`, `${db}-shm`]

function engineAt(path: string): SqliteEngine {
  return new SqliteEngine({
    path,
    synchronous: 'FULL',
    busyTimeoutMs: 1000,
    secret: undefined,
    onFatal: (e) => {
      throw e
    },
  })
}

testSqliteOnly('a new database, its -wal and -shm are 0600 under a 022 umask (SQLite alone makes them 0644), with no warning', async () => {
  const dir = tempDir('otpd-modes-')
  const db = join(dir, 'data', 'otpd.db')
  const engine = engineAt(db)
  try {
    await engine.storage.write((r) => r.admin.findAccount('default'))
    for (const f of FILES(db)) expect([relative(dir, f), existsSync(f) && mode(f)]).toEqual([relative(dir, f), 0o600])
    expect(mode(join(dir, 'data'))).toBe(0o700)
    expect(engine.warnings).toEqual([])
  } finally {
    await engine.close()
  }
})

testSqliteOnly('existing database files of mode 0644 are left as they are, and each gets a warning naming its absolute path and mode', async () => {
  const dir = tempDir('otpd-modes-')
  const db = join(dir, 'otpd.db')
  await engineAt(db).close()
  // As an older otpd left them (the -wal and -shm stay after a close).
  for (const f of FILES(db)) chmodSync(f, 0o644)
  // A relative path still names the file absolutely.
  const cwd = process.cwd()
  process.chdir(dir)
  let engine: SqliteEngine
  try {
    engine = engineAt('otpd.db')
  } finally {
    process.chdir(cwd)
  }
  try {
    expect(FILES(db).map(mode)).toEqual([0o644, 0o644, 0o644])
    expect(engine.warnings).toEqual(
      FILES(db).map((f) => `the database file ${f} has mode 0644: other users may read it (otpd creates its files 0600; chmod 600 ${f})`),
    )
  } finally {
    await engine.close()
  }
})

testSqliteOnly('otpd serve on a database file of mode 0640: the start log warns (stderr), naming the absolute path and mode', async () => {
  const env = await cliEnv()
  const db = join(env.dir, 'otpd.db')
  expect(mode(db)).toBe(0o600) // cliEnv made it as `otpd serve` would
  chmodSync(db, 0o640)
  const server = await startServer(env)
  expect(await server.stop()).toBe(0)
  const stderr = await new Response(server.proc.stderr).text()
  expect(stderr).toContain(`the database file ${db} has mode 0640: other users may read it (otpd creates its files 0600; chmod 600 ${db})`)
})
