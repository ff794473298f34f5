/**
 * The PostgreSQL engine itself (store/pg/), beside what every behaviour test
 * checks on both engines: the embedded migrations, the config rules of
 * `database.url` and the secret, the connection settings, and (with
 * OTPD_TEST_DATABASE=postgres) the start checks through the real CLI and
 * `otpd serve`: one secret for all nodes (its fingerprint in the database),
 * a schema from a newer otpd refused, migrations applied once by processes
 * starting together (the advisory lock), and `otpd backup` pointing at
 * pg_dump. The SQLite engine's start checks: test/store/start-checks.test.ts.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { SQL } from 'bun'
import { randomBytes } from 'node:crypto'
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { resolveConfig } from '../../src/app/load-config.ts'
import { configProblems } from '../kit/config.ts'
import { pgConnection } from '../../src/config/database.ts'
import { migrationFiles, migrationJournal } from '../../src/store/pg/migrations/index.ts'
import { cliEnv, startServer, type CliEnv } from '../kit/cli.ts'
import { createHarness, ON_PG, testDatabase } from '../kit/harness.ts'
import { sharedCluster } from '../kit/pg-cluster.ts'

setDefaultTimeout(60_000)

const MAIN = join(import.meta.dir, '..', '..', 'src', 'main.ts')
const URL_ = 'postgres://otpd@db.example:5433/otpd'

const problems = (raw: Record<string, unknown>, env: Record<string, string> = {}): string[] => configProblems(() => resolveConfig(raw, 'test', env))

test('every migration drizzle-kit wrote for PostgreSQL is embedded, and nothing else', () => {
  const dir = join(import.meta.dir, '..', '..', 'src', 'store', 'pg', 'migrations')
  const onDisk = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .map((f) => f.replace(/\.sql$/, ''))
    .sort()
  expect(migrationJournal.entries.map((e) => e.tag).sort()).toEqual(onDisk)
  expect(Object.keys(migrationFiles).sort()).toEqual(onDisk)
})

describe('config', () => {
  test('database.url without a server secret is refused in one sentence', () => {
    expect(problems({ database: { url: URL_ } })).toEqual([
      'database.url selects PostgreSQL, where every node must use the same server secret: set server.secret, server.secret_env or server.secret_file (a copy of the otpd.secret file works)',
    ])
  })

  test('each way of giving the secret is accepted; two at once are refused; a named variable must be set', () => {
    expect(problems({ database: { url: URL_ }, server: { secret: 'x'.repeat(32) } })).toEqual([])
    expect(problems({ database: { url: URL_ }, server: { secret_file: '/etc/otpd/otpd.secret' } })).toEqual([])
    expect(problems({ database: { url: URL_ }, server: { secret_env: 'OTPD_SECRET' } }, { OTPD_SECRET: 's'.repeat(40) })).toEqual([])
    expect(problems({ database: { url: URL_ }, server: { secret_env: 'OTPD_SECRET' } })).toEqual(['server.secret_env names OTPD_SECRET, which is not set'])
    expect(problems({ server: { secret_env: 'OTPD_SECRET' } }, { OTPD_SECRET: 'short' })).toEqual([
      'server.secret_env names OTPD_SECRET, whose value is shorter than 32 characters',
    ])
    expect(problems({ server: { secret: 'x'.repeat(32), secret_file: '/x' } })).toEqual([
      'server.secret and server.secret_file are both set: give the server secret one way only',
    ])
  })

  test('a URL that is not postgres:// and a password_env without a URL or a variable are refused', () => {
    // Never echoed: a URL may carry a password.
    expect(problems({ database: { url: 'mysql://root:hunter2@x/y' } })).toEqual(['database.url must be a postgres:// URL'])
    expect(problems({ database: { password_env: 'PGPASS_OTPD' } })).toEqual([
      'database.password_env is set but database.url is not: the password is for PostgreSQL',
      'database.password_env names PGPASS_OTPD, which is not set',
    ])
  })

  test('the password comes from password_env, else the URL, else PGPASSWORD; PG* variables fill what the URL lacks', () => {
    const db = (raw: Record<string, unknown>, env: Record<string, string> = {}) =>
      pgConnection(resolveConfig({ database: raw, server: { secret: 'x'.repeat(32) } }, 'test', env).database, env)
    expect(db({ url: 'postgres://app:inurl@h:6000/d', password_env: 'P' }, { P: 'fromenv', PGPASSWORD: 'pg' })).toMatchObject({ password: 'fromenv' })
    expect(db({ url: 'postgres://app:inurl@h:6000/d' }, { PGPASSWORD: 'pg' })).toMatchObject({ password: 'inurl' })
    expect(db({ url: 'postgres://app@h:6000/d' }, { PGPASSWORD: 'pg' })).toMatchObject({
      password: 'pg',
      username: 'app',
      hostname: 'h',
      port: 6000,
      database: 'd',
    })
    expect(db({ url: 'postgres://h' }, { PGUSER: 'u', PGPORT: '7000', PGDATABASE: 'x' })).toMatchObject({
      username: 'u',
      port: 7000,
      database: 'x',
      password: undefined,
    })
    // Shown in messages and logs without the password.
    expect(db({ url: 'postgres://app:inurl@h:6000/d' }).display).toBe('postgres://app@h:6000/d')
    expect(db({ url: 'postgres://app@h:6000/d' }).socket).toBeUndefined()
  })

  test('a host that is a directory names a unix socket in it, as in libpq: a host= parameter, a percent-encoded host, or PGHOST', () => {
    const db = (url: string, env: Record<string, string> = {}) =>
      pgConnection(resolveConfig({ database: { url }, server: { secret: 'x'.repeat(32) } }, 'test', env).database, env)
    expect(db('postgres://otpd@localhost/otpd?host=/var/run/postgresql')).toMatchObject({
      socket: '/var/run/postgresql/.s.PGSQL.5432',
      hostname: 'localhost',
      username: 'otpd',
      database: 'otpd',
      display: 'postgres://otpd@localhost:5432/otpd?host=/var/run/postgresql',
    })
    expect(db('postgres:///otpd?host=/run/pg/').socket).toBe('/run/pg/.s.PGSQL.5432')
    expect(db('postgres://otpd@%2Ftmp%2Fpg:6432/otpd')).toMatchObject({ socket: '/tmp/pg/.s.PGSQL.6432', port: 6432 })
    expect(db('postgres:///otpd', { PGHOST: '/var/run/postgresql', PGPORT: '5433' }).socket).toBe('/var/run/postgresql/.s.PGSQL.5433')
    // A host= that is not a directory is refused: otpd has no other use for it.
    expect(problems({ database: { url: 'postgres://otpd@localhost/otpd?host=db.internal' }, server: { secret: 'x'.repeat(32) } })).toEqual([
      "database.url's host parameter must be a socket directory starting with / (such as /var/run/postgresql), not 'db.internal'",
    ])
  })
})

/** A config file for the env's database with exactly this secret line (and the other tables). */
function setSecret(env: CliEnv, secretLine: string, toml = ''): void {
  writeFileSync(env.configFile, `[database]\npath = "${join(env.dir, 'otpd.db')}"\nurl = "${env.databaseUrl}"\n[server]\n${secretLine}\n${toml}`)
}

/** `otpd serve` that must refuse to start: its exit code and stderr. */
function serveRefused(env: CliEnv): { code: number; stderr: string } {
  const { OTPD_TEST_DATABASE: _e, ...rest } = process.env
  const p = Bun.spawnSync(['bun', MAIN, 'serve', '--listen', '127.0.0.1:0'], { env: { ...rest, OTPD_CONFIG: env.configFile }, cwd: env.dir, timeout: 15_000 })
  return { code: p.exitCode ?? -1, stderr: p.stderr.toString() }
}

function expectRefused(env: CliEnv, message: string): void {
  const cli = env.run('keys', 'list')
  expect({ code: cli.code, stderr: cli.stderr, stdout: cli.stdout }).toEqual({ code: 1, stderr: `otpd: error: ${message}\n`, stdout: '' })
  expect(serveRefused(env)).toEqual({ code: 1, stderr: `otpd: error: ${message}\n` })
}

describe.skipIf(!ON_PG)('a unix socket', () => {
  test("otpd reaches PostgreSQL through the socket directory a URL's host= names, not over TCP", async () => {
    const env = await cliEnv()
    const tcp = new URL(env.databaseUrl!)
    // The cluster's port: the socket file's name carries it (.s.PGSQL.<port>).
    const viaSocket = `postgres://${tcp.username}@localhost:${tcp.port}${tcp.pathname}?host=${sharedCluster().dir}`
    setSecret(env, `secret = "${'s'.repeat(40)}"`)
    writeFileSync(env.configFile, readFileSync(env.configFile, 'utf8').replace(`url = "${env.databaseUrl}"`, `url = "${viaSocket}"`))
    const key = env.json('keys', 'create', '--name', 'over-the-socket').key as string
    const server = await startServer(env)
    try {
      const r = await fetch(`${server.url}/api/v1/verify`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ verification_id: '00000000-0000-4000-8000-000000000000', code: '123456' }),
      })
      expect(r.status).toBe(404) // the key, written through the socket, authenticates
      // Every connection otpd holds is a unix-socket one: PostgreSQL sees no client address.
      const sql = new SQL({ url: env.databaseUrl!, max: 1 })
      try {
        const rows = (await sql.unsafe(
          "SELECT count(*)::int AS n, count(client_addr)::int AS tcp FROM pg_stat_activity WHERE application_name = 'otpd' AND datname = current_database()",
        )) as { n: number; tcp: number }[]
        expect(rows[0]!.n).toBeGreaterThan(0)
        expect(rows[0]!.tcp).toBe(0)
      } finally {
        await sql.close()
      }
    } finally {
      await server.stop()
    }
  })
})

describe.skipIf(!ON_PG)('start checks on PostgreSQL', () => {
  test('one secret for all nodes: a copy of the same secret file works, another secret is refused with one sentence', async () => {
    const env = await cliEnv()
    const file = join(env.dir, 'otpd.secret')
    writeFileSync(file, randomBytes(32).toString('hex') + '\n', { mode: 0o600 })
    const copy = join(env.dir, 'copy-of-otpd.secret')
    copyFileSync(file, copy)
    setSecret(env, `secret_file = "${file}"`)
    const key = env.json('keys', 'create', '--name', 'first').key as string
    // Another node, with its copy of the file: the same secret, the same keys.
    setSecret(env, `secret_file = "${copy}"`)
    expect(env.json('keys', 'list').map((k: { name: string }) => k.name)).toEqual(['first'])
    const server = await startServer(env)
    const r = await fetch(`${server.url}/api/v1/verify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ verification_id: '00000000-0000-4000-8000-000000000000', code: '123456' }),
    })
    expect(r.status).toBe(404) // the key authenticates: 404 for the unknown verification, not 401
    await server.stop()
    // A node with another secret: refused, naming where its secret came from.
    setSecret(env, `secret = "${'another-secret-'.padEnd(40, 'x')}"`)
    expectRefused(
      env,
      `the server.secret setting does not hold the secret the PostgreSQL database ${env.databaseUrl} was made with: give every node the same secret (a new secret would make every key invalid)`,
    )
    const other = join(env.dir, 'other.secret')
    writeFileSync(other, randomBytes(32).toString('hex') + '\n')
    setSecret(env, `secret_file = "${other}"`)
    expectRefused(
      env,
      `the file ${other} (server.secret_file) does not hold the secret the PostgreSQL database ${env.databaseUrl} was made with: give every node the same secret (a new secret would make every key invalid)`,
    )
  })

  test('a node without a secret refuses to start', async () => {
    const env = await cliEnv()
    setSecret(env, '')
    const message = `invalid configuration (${env.configFile}): database.url selects PostgreSQL, where every node must use the same server secret: set server.secret, server.secret_env or server.secret_file (a copy of the otpd.secret file works)`
    expectRefused(env, message)
  })

  test('a schema from a newer otpd is refused before anything is applied: upgrade otpd', async () => {
    const env = await cliEnv()
    expect(env.run('accounts', 'list').code).toBe(0) // migrated
    const newer = migrationJournal.entries.at(-1)!.when + 86_400_000
    const sql = new SQL({ url: env.databaseUrl!, max: 1 })
    try {
      await sql.unsafe('INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ($1, $2)', ['newer', newer])
    } finally {
      await sql.close()
    }
    expectRefused(
      env,
      `the PostgreSQL database ${env.databaseUrl} has schema changes from a newer otpd (migration of ${new Date(newer).toISOString()}): upgrade otpd`,
    )
  })

  test('four processes starting together on an empty database apply each migration once (advisory lock) and agree on the secret', async () => {
    const env = await cliEnv()
    const runs = await Promise.all([1, 2, 3, 4].map((i) => env.runAsync('accounts', 'create', `team${i}`)))
    expect(runs.map((r) => [r.code, r.stderr])).toEqual([1, 2, 3, 4].map(() => [0, '']))
    const sql = new SQL({ url: env.databaseUrl!, max: 1 })
    try {
      const applied = (await sql.unsafe('SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations')) as { n: number }[]
      expect(applied[0]!.n).toBe(migrationJournal.entries.length)
      const accounts = (await sql.unsafe('SELECT name FROM accounts ORDER BY name')) as { name: string }[]
      expect(accounts.map((a) => a.name)).toEqual(['default', 'team1', 'team2', 'team3', 'team4'])
      const fingerprints = (await sql.unsafe("SELECT count(*)::int AS n FROM settings WHERE name = 'secret_fingerprint'")) as { n: number }[]
      expect(fingerprints[0]!.n).toBe(1)
    } finally {
      await sql.close()
    }
  })

  test('otpd backup answers that PostgreSQL is backed up with pg_dump, and writes nothing', async () => {
    const env = await cliEnv()
    const r = env.run('backup', join(env.dir, 'copy.db'))
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(
      'otpd: error: otpd backup copies a SQLite file, and this config uses PostgreSQL (database.url): back it up with pg_dump (e.g. pg_dump -Fc -f otpd.dump postgres://user@host:5432/otpd) and keep the server secret with it\n',
    )
    expect(readdirSync(env.dir)).not.toContain('copy.db')
  })
})

describe.skipIf(!ON_PG)('the storage on PostgreSQL', () => {
  test('two writes that lock in opposite orders deadlock; PostgreSQL aborts one (40P01), the storage runs it again, both commit', async () => {
    const h = await createHarness()
    try {
      const a = new Uint8Array(16).fill(1)
      const b = new Uint8Array(16).fill(2)
      // Each write locks one recipient (its failure log), waits until the other holds its own, then asks for the other's.
      let holding = 0
      const bothHold = async () => {
        holding++
        for (let i = 0; i < 500 && holding < 2; i++) await Bun.sleep(5)
      }
      const runs = { ab: 0, ba: 0 }
      const write = (name: 'ab' | 'ba', first: Uint8Array, second: Uint8Array) =>
        h.server.storage.write(async (r) => {
          runs[name]++
          await r.failures.record(first, h.clock.now())
          // A read waits for the pipelined statements before it (store/pg/client.ts): the lock is held from here.
          await r.failures.nthLatest(first, 1)
          if (runs[name] === 1) await bothHold()
          await r.failures.record(second, h.clock.now())
          return name
        })
      expect(await Promise.all([write('ab', a, b), write('ba', b, a)])).toEqual(['ab', 'ba'])
      // One of them was aborted as the deadlock's victim and ran again; each write's failures are in once.
      expect(runs.ab + runs.ba).toBe(3)
      const rows = await h.sql('SELECT encode(recipient_hash, $1) AS h, count(*)::int AS n FROM recipient_failures GROUP BY 1 ORDER BY 1', ['hex'])
      expect(rows).toEqual([
        { h: '01'.repeat(16), n: 2 },
        { h: '02'.repeat(16), n: 2 },
      ])
    } finally {
      h.close()
    }
  })

  test('a pipelined statement that fails rolls its whole transaction back and rejects with its own error, whether a read or the COMMIT comes next', async () => {
    const h = await createHarness({ credits: 5 })
    try {
      const sent = await h.send({ channel: 'sms', recipient: '+14155550123' })
      const [row] = await h.sql('SELECT seq, key_id FROM verifications WHERE id = $1', [sent.json.verification_id])
      const v = (await h.server.storage.read((r) => r.verifications.findForKey(sent.json.verification_id, Number(row!.seq), Number(row!.key_id))))!
      // insert is pipelined (Tx.exec): a second row with the same number fails after the account's insert ran.
      const code = (p: Promise<unknown>) =>
        p.then(
          () => 'committed',
          (err: { errno?: string }) => err.errno,
        )
      expect(
        await code(
          h.server.storage.write(async (r) => {
            await r.admin.insertAccount('pipelined-then-commit', h.clock.now())
            await r.verifications.insert(v)
          }),
        ),
      ).toBe('23505')
      expect(
        await code(
          h.server.storage.write(async (r) => {
            await r.admin.insertAccount('pipelined-then-read', h.clock.now())
            await r.verifications.insert(v)
            await r.credits.balance(v.accountId)
          }),
        ),
      ).toBe('23505')
      expect(await h.sql("SELECT name FROM accounts WHERE name LIKE 'pipelined%'")).toEqual([])
      // The connection serves the next transactions.
      expect(await code(h.server.storage.write((r) => r.admin.insertAccount('after', h.clock.now())))).toBe('committed')
    } finally {
      h.close()
    }
  })

  test('a server whose default isolation is repeatable read changes nothing: otpd runs READ COMMITTED, and 30 concurrent sends to one recipient give exactly 2', async () => {
    const url = (await testDatabase('/tmp')).database.url as string
    const name = new URL(url).pathname.slice(1)
    const admin = new SQL({ url, max: 1 })
    await admin.unsafe(`ALTER DATABASE "${name}" SET default_transaction_isolation = 'repeatable read'`)
    await admin.close()
    const h = await createHarness({ credits: 100, databaseUrl: url })
    try {
      expect(await h.sql("SELECT current_setting('default_transaction_isolation') AS i")).toEqual([{ i: 'repeatable read' }])
      const rs = await Promise.all(Array.from({ length: 30 }, () => h.send({ channel: 'sms', recipient: '+14155550123' })))
      expect(rs.filter((r) => r.status === 200).length).toBe(2)
      expect(rs.filter((r) => r.status === 429).length).toBe(28)
    } finally {
      h.close()
    }
  })
})
