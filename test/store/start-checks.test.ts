/**
 * Start checks (store/sqlite/start-checks.ts), each through the real CLI and `otpd serve`
 * with its exact message: a missing or different server secret, a schema
 * from a newer otpd, a database that cannot be opened, an unwritable database
 * or directory. Unwritable cases use a read-only tmpfs and `chattr +i`, since
 * tests run as root (file modes do not stop root).
 */
import { Database } from 'bun:sqlite'
import { expect, setDefaultTimeout } from 'bun:test'
import { createHmac } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { migrationJournal } from '../../src/store/sqlite/migrations/index.ts'
import { afterTest } from '../kit/cleanup.ts'
import { cliEnv, post, startServer, type CliEnv } from '../kit/cli.ts'
import { testSqliteOnly } from '../kit/harness.ts'

setDefaultTimeout(30_000)

const MAIN = join(import.meta.dir, '..', '..', 'src', 'main.ts')
const OTHER_SECRET = 'ab'.repeat(32)
const CONFIGURED = 'a-configured-server-secret-of-40-chars-xx'

function sh(...cmd: string[]): void {
  const p = Bun.spawnSync(cmd)
  if (p.exitCode !== 0) throw new Error(`${cmd.join(' ')}: ${p.stderr.toString()}`)
}

/** `otpd serve` that must refuse to start: its exit code and stderr (killed after 10 s if it starts). */
function serveRefused(env: CliEnv): { code: number; stderr: string } {
  const p = Bun.spawnSync(['bun', MAIN, 'serve', '--listen', '127.0.0.1:0'], {
    env: { ...process.env, OTPD_CONFIG: env.configFile },
    cwd: env.dir,
    timeout: 10_000,
  })
  return { code: p.exitCode ?? -1, stderr: p.stderr.toString() }
}

/** Both the CLI and the server refuse, with exactly this one line. */
function expectRefused(env: CliEnv, message: string): void {
  const cli = env.run('keys', 'list')
  expect({ code: cli.code, stderr: cli.stderr, stdout: cli.stdout }).toEqual({ code: 1, stderr: `otpd: error: ${message}\n`, stdout: '' })
  const serve = serveRefused(env)
  expect(serve).toEqual({ code: 1, stderr: `otpd: error: ${message}\n` })
}

function setConfig(env: CliEnv, dbPath: string, extra = ''): void {
  writeFileSync(env.configFile, `[database]\npath = "${dbPath}"\n${extra}`)
}

function sql<T>(dbPath: string, fn: (db: Database) => T): T {
  const db = new Database(dbPath)
  try {
    return fn(db)
  } finally {
    db.close()
  }
}

const storedFingerprint = (dbPath: string) =>
  sql(dbPath, (db) => db.query<{ value: string }, []>("SELECT value FROM settings WHERE name = 'secret_fingerprint'").get()?.value)

testSqliteOnly('a fresh database gets a new secret and keeps its fingerprint (an HMAC, not the secret); keys work across restarts', async () => {
  const env = await cliEnv('', {}, { noDatabase: true })
  const db = join(env.dir, 'otpd.db')
  const key = env.json('keys', 'create', '--init').key
  const secret = Buffer.from(readFileSync(join(env.dir, 'otpd.secret'), 'utf8').trim(), 'hex')
  expect(storedFingerprint(db)).toBe(createHmac('sha256', secret).update('otpd server secret fingerprint v1').digest('hex'))
  expect(storedFingerprint(db)).not.toContain(secret.toString('hex'))
  const server = await startServer(env)
  expect((await post(server.url, '/api/v1/send', key, { channel: 'sms', recipient: '+15550100001' })).status).toBe(200)
})

testSqliteOnly('a missing secret file with API keys in the database is refused, naming both files and the fix', async () => {
  const env = await cliEnv('', {}, { noDatabase: true })
  env.json('keys', 'create', '--init')
  env.json('keys', 'create', '--init')
  env.json('keys', 'create', '--init')
  renameSync(join(env.dir, 'otpd.secret'), join(env.dir, 'saved.secret'))
  const db = join(env.dir, 'otpd.db')
  expectRefused(
    env,
    `the server secret ${join(env.dir, 'otpd.secret')} is missing, but ${db} holds 3 API keys made with it: restore otpd.secret from the backup taken with this database (a new secret would make every key invalid)`,
  )
  // Nothing was generated in its place; putting it back is the whole fix.
  expect(() => statSync(join(env.dir, 'otpd.secret'))).toThrow()
  renameSync(join(env.dir, 'saved.secret'), join(env.dir, 'otpd.secret'))
  expect(env.json('keys', 'list')).toHaveLength(3)
})

testSqliteOnly('a missing secret file is refused even with no keys once the database has a fingerprint', async () => {
  const env = await cliEnv()
  env.run('accounts', 'list')
  renameSync(join(env.dir, 'otpd.secret'), join(env.dir, 'saved.secret'))
  expectRefused(
    env,
    `the server secret ${join(env.dir, 'otpd.secret')} is missing, but ${join(env.dir, 'otpd.db')} was made with it: restore otpd.secret from the backup taken with this database (a new secret would make every key invalid)`,
  )
})

testSqliteOnly('a different secret file is refused', async () => {
  const env = await cliEnv('', {}, { noDatabase: true })
  env.json('keys', 'create', '--init')
  writeFileSync(join(env.dir, 'otpd.secret'), `${OTHER_SECRET}\n`, { mode: 0o600 })
  expectRefused(
    env,
    `the server secret ${join(env.dir, 'otpd.secret')} does not match the secret ${join(env.dir, 'otpd.db')} was made with: restore otpd.secret from the backup taken with this database (a new secret would make every key invalid)`,
  )
})

testSqliteOnly('server.secret counts as the secret: a different one is refused naming the setting; dropping it is a missing secret', async () => {
  const env = await cliEnv('', {}, { noDatabase: true })
  const db = join(env.dir, 'otpd.db')
  setConfig(env, db, `[server]\nsecret = "${CONFIGURED}"\n`)
  env.json('keys', 'create', '--init')
  expect(() => statSync(join(env.dir, 'otpd.secret'))).toThrow() // the setting is the secret: no file
  setConfig(env, db, `[server]\nsecret = "${CONFIGURED.replace('a-', 'b-')}"\n`)
  expectRefused(
    env,
    `the server.secret setting does not match the secret ${db} was made with: set server.secret back to the value used with this database (a new secret would make every key invalid)`,
  )
  setConfig(env, db)
  expectRefused(
    env,
    `the server secret ${join(env.dir, 'otpd.secret')} is missing, but ${db} holds 1 API key made with it: restore otpd.secret from the backup taken with this database (a new secret would make every key invalid)`,
  )
})

/**
 * The database as an otpd from before fingerprints left it, once migrated: no
 * fingerprint stored. (Undoing migration 0004 in place would also undo every
 * later migration's bookkeeping, and those cannot be applied twice.)
 */
function withoutFingerprints(db: string): void {
  sql(db, (c) => c.run("DELETE FROM settings WHERE name = 'secret_fingerprint'"))
}

testSqliteOnly('a database from before fingerprints takes the fingerprint of its secret at first open; then another secret is refused', async () => {
  const env = await cliEnv('', {}, { noDatabase: true })
  const db = join(env.dir, 'otpd.db')
  env.json('keys', 'create', '--init')
  withoutFingerprints(db)
  expect(env.json('keys', 'list')).toHaveLength(1)
  expect(storedFingerprint(db)).toMatch(/^[0-9a-f]{64}$/)
  writeFileSync(join(env.dir, 'otpd.secret'), `${OTHER_SECRET}\n`, { mode: 0o600 })
  expect(env.run('keys', 'list').stderr).toContain('does not match the secret')
})

testSqliteOnly('a database from before fingerprints with another secret is refused when its verification ids do not read back', async () => {
  const env = await cliEnv('', {}, { noDatabase: true })
  const db = join(env.dir, 'otpd.db')
  const key = env.json('keys', 'create', '--init').key
  const server = await startServer(env)
  expect((await post(server.url, '/api/v1/send', key, { channel: 'sms', recipient: '+15550100001' })).status).toBe(200)
  await server.stop()
  withoutFingerprints(db)
  const saved = readFileSync(join(env.dir, 'otpd.secret'))
  writeFileSync(join(env.dir, 'otpd.secret'), `${OTHER_SECRET}\n`, { mode: 0o600 })
  expectRefused(
    env,
    `the server secret ${join(env.dir, 'otpd.secret')} does not match the secret ${db} was made with: restore otpd.secret from the backup taken with this database (a new secret would make every key invalid)`,
  )
  expect(storedFingerprint(db)).toBeUndefined()
  writeFileSync(join(env.dir, 'otpd.secret'), saved, { mode: 0o600 })
  expect(env.json('keys', 'list')).toHaveLength(1)
  expect(storedFingerprint(db)).toMatch(/^[0-9a-f]{64}$/)
})

testSqliteOnly('a schema from a newer otpd is refused before anything is applied: upgrade otpd', async () => {
  const env = await cliEnv('', {}, { noDatabase: true })
  const db = join(env.dir, 'otpd.db')
  env.json('keys', 'create', '--init')
  const newer = migrationJournal.entries.at(-1)!.when + 86_400_000
  sql(db, (c) => c.run('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)', ['from-the-future', newer]))
  const before = sql(db, (c) => c.query('SELECT hash, created_at FROM __drizzle_migrations ORDER BY created_at').all())
  expectRefused(env, `${db} has schema changes from a newer otpd (migration of ${new Date(newer).toISOString()}): upgrade otpd`)
  expect(sql(db, (c) => c.query('SELECT hash, created_at FROM __drizzle_migrations ORDER BY created_at').all())).toEqual(before)
})

testSqliteOnly('a file that is not a database: the error names the path', async () => {
  const env = await cliEnv('', {}, { noDatabase: true })
  const db = join(env.dir, 'otpd.db')
  writeFileSync(db, 'not sqlite '.repeat(1000))
  expectRefused(env, `cannot open the database ${db}: file is not a database`)
})

testSqliteOnly('a database path that cannot be opened (a directory): the error names the path', async () => {
  const env = await cliEnv('', {}, { noDatabase: true })
  const db = join(env.dir, 'otpd.db')
  mkdirSync(db)
  expectRefused(env, `cannot open the database ${db}: unable to open database file`)
})

testSqliteOnly('a database on a read-only file system is refused at start', async () => {
  const env = await cliEnv('', {}, { noDatabase: true })
  const mnt = join(env.dir, 'ro')
  mkdirSync(mnt)
  sh('mount', '-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mnt)
  // Undone before the directory cliEnv made is removed: cleanup runs newest first.
  afterTest(() => sh('umount', mnt))
  const db = join(mnt, 'otpd.db')
  setConfig(env, db)
  env.json('keys', 'create', '--init')
  sh('mount', '-o', 'remount,ro', mnt)
  expectRefused(env, `the database ${db} is not writable (read-only file system): otpd must be able to write it and its directory`)
})

testSqliteOnly('an immutable database file is refused at start (in WAL mode SQLite would accept writes it can never checkpoint)', async () => {
  const env = await cliEnv('', {}, { noDatabase: true })
  const db = join(env.dir, 'otpd.db')
  env.json('keys', 'create', '--init')
  sh('chattr', '+i', db)
  afterTest(() => sh('chattr', '-i', db))
  expectRefused(env, `the database ${db} is not writable (operation not permitted): otpd must be able to write it and its directory`)
})

testSqliteOnly('a directory where the -wal and -shm files cannot be created is refused at start', async () => {
  const env = await cliEnv('', {}, { noDatabase: true })
  const dir = join(env.dir, 'data')
  const db = join(dir, 'otpd.db')
  setConfig(env, db)
  env.json('keys', 'create', '--init')
  sh('chattr', '+i', dir)
  afterTest(() => sh('chattr', '-i', dir))
  expectRefused(
    env,
    `the database directory ${dir} is not writable (operation not permitted): otpd must create otpd.db-wal and otpd.db-shm beside otpd.db there`,
  )
})
