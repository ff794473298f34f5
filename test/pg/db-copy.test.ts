/**
 * `otpd db copy --to postgres://…` (docs/multi-node.md): a SQLite database
 * filled under load by a real `otpd serve` (concurrent sends and verifies on
 * two accounts, wrong codes, a disabled and a revoked key), copied into an
 * empty PostgreSQL database; then a server on the copy, with the SQLite
 * deployment's secret file: every key answers as before, codes sent before
 * the copy verify after it, the per-recipient window carried over, and
 * balances and ledgers are equal on both sides. A second copy into the same
 * database is refused with its sentence.
 * Runs when OTPD_TEST_DATABASE=postgres.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { copyToPostgres } from '../../src/store/copy-to-pg.ts'
import { applyMigrations } from '../../src/store/pg/migrate.ts'
import { POSTGRES } from '../../src/store/sql/dialect.ts'
import { join } from 'node:path'
import {
  cli,
  makeEnv,
  post,
  runFromSource,
  startServer,
  type OtpdEnv,
  type ServerProc,
  ledgerViolations,
  pgSnapshot,
  pgEnv,
  stopNodes,
  startLoad,
} from '../kit/processes.ts'
import { freshDatabase } from '../kit/pg-cluster.ts'
import { waitFor } from '../kit/wait-for.ts'
import { migrateUntil } from '../kit/pg-migrations.ts'

setDefaultTimeout(180_000)
runFromSource()

const ON_PG = process.env.OTPD_TEST_DATABASE === 'postgres'
// Per-key limit out of the way; the per-recipient windows at their defaults (2 a minute).
const TOML = '[limits]\nkey_requests_per_minute = 1000000\n[channels]\nsms = ["x"]\n[providers.x]\ntype = "noop"\n'

const envs: OtpdEnv[] = []
const servers: ServerProc[] = []
afterAll(async () => {
  await stopNodes(servers)
  envs.forEach((e) => e.close())
})

function json(env: OtpdEnv, ...args: string[]): any {
  const r = cli(env, ...args, '--json')
  if (r.code !== 0) throw new Error(`otpd ${args.join(' ')} failed (${r.code}): ${r.stderr}`)
  return JSON.parse(r.stdout)
}

const LEDGER = 'SELECT id, account_id, kind, amount, verification_id, note, created_at FROM credit_ledger ORDER BY id'
const BALANCES = 'SELECT name, balance FROM accounts ORDER BY name'
/** PostgreSQL spreads a balance over rows (docs/multi-node.md#an-accounts-balance). */
const PG_BALANCES = `SELECT name, ${POSTGRES.accountBalance}::bigint AS balance FROM accounts ORDER BY name`
const norm = (rows: Record<string, unknown>[]) =>
  rows.map((r) =>
    Object.fromEntries(
      Object.entries(r).map(([k, v]) => [k, typeof v === 'string' && /^[0-9]+$/.test(v) && k !== 'verification_id' && k !== 'note' ? Number(v) : v]),
    ),
  )

describe.skipIf(!ON_PG)('otpd db copy', () => {
  test('a database filled under load, copied: every key works, balances and ledgers equal, a second copy refused', async () => {
    const lite = makeEnv('dbcopy', TOML)
    envs.push(lite)
    json(lite, 'accounts', 'create', 'acme', '--init')
    const k1 = json(lite, 'keys', 'create')
    const k2 = json(lite, 'keys', 'create', '--account', 'acme')
    const kOff = json(lite, 'keys', 'create')
    const kGone = json(lite, 'keys', 'create', '--account', 'acme')
    json(lite, 'credits', 'add', '5000')
    json(lite, 'credits', 'add', '3000', '--account', 'acme', '--note', 'invoice 7')
    // Events and the fraud guard: an endpoint (its events pile up in the outbox meanwhile) and an account setting to carry over.
    const hook = json(lite, 'webhooks', 'add', '--url', 'http://127.0.0.1:9/otpd-events', '--account', 'acme')
    json(lite, 'accounts', 'set', 'acme', '--daily-credit-limit', '100000')

    const sqliteServer = await startServer(lite)
    servers.push(sqliteServer)
    const loads = [startLoad(k1.key, new Map([[0, sqliteServer.url]]), 4), startLoad(k2.key, new Map([[0, sqliteServer.url]]), 4)]
    // Wrong codes meanwhile: failed attempts and recipient failures to carry over.
    const wrong = await post(sqliteServer.url, '/api/v1/send', k2.key, { channel: 'sms', recipient: '+14155550111', code: '97531' })
    expect(wrong.status).toBe(200)
    for (let i = 0; i < 3; i++)
      expect((await post(sqliteServer.url, '/api/v1/verify', k2.key, { verification_id: wrong.json.verification_id, code: '11111' })).json.message).toBe(
        'Invalid code',
      )
    // A code sent and not yet used, to verify on PostgreSQL; its recipient's minute window then holds 2 sends.
    const pending = await post(sqliteServer.url, '/api/v1/send', k1.key, { channel: 'sms', recipient: '+14155550122', code: '246810' })
    expect((await post(sqliteServer.url, '/api/v1/send', k1.key, { channel: 'sms', recipient: '+14155550122' })).status).toBe(200)
    // Over 100 sends answered: over 100 key hits, and over 50 verifications, to copy.
    await waitFor(() => loads[0]!.ack.sends.size + loads[1]!.ack.sends.size > 100 && loads[0]!.ack.verified.size > 5, {
      what: 'the load to reach the counts checked below',
      ms: 30_000,
    })
    await Promise.all(loads.map((l) => l.stop()))
    expect(loads[0]!.ack.sends.size + loads[1]!.ack.sends.size).toBeGreaterThan(100)
    expect(loads[0]!.ack.verified.size).toBeGreaterThan(5)
    json(lite, 'keys', 'disable', String(kOff.id))
    json(lite, 'keys', 'revoke', String(kGone.id))
    await stopNodes([sqliteServer])
    // A viewer and an account whose custom texts are off: neither may come out of the copy as the defaults (admin, on).
    json(lite, 'operators', 'add', 'carol', '--role', 'viewer')
    json(lite, 'accounts', 'set', 'acme', '--custom-text', 'off')

    const url = await freshDatabase('dbcopy')
    const copied = json(lite, 'db', 'copy', '--to', url)
    expect(copied.checked).toBe(true)
    expect(copied.copied.api_keys).toBe(4)
    expect(copied.copied.accounts).toBe(2)
    expect(copied.copied.verifications).toBeGreaterThan(50)
    // Every Invalid code answered is one failure row: the 3 above and the load's.
    const loadFailures = loads.flatMap((l) => [...l.ack.invalid.values()]).reduce((a, b) => a + b, 0)
    expect(copied.copied.recipient_failures).toBe(3 + loadFailures)
    expect(copied.copied.key_hits).toBeGreaterThan(100)
    expect(copied.copied.settings).toBeGreaterThanOrEqual(1)
    expect(copied.copied.webhook_endpoints).toBe(1)
    expect(copied.copied.events).toBeGreaterThan(0)
    expect(copied.copied.event_deliveries).toBe(
      copied.copied.events -
        (await pgSnapshot(url, async (sql) =>
          Number((await sql.unsafe("SELECT count(*) AS n FROM events WHERE account_id <> (SELECT id FROM accounts WHERE name = 'acme')"))[0].n),
        )),
    )

    // Equal on both sides, read independently of the command's own check.
    const sqlite = new Database(lite.dbPath, { readonly: true })
    const liteLedger = norm(sqlite.query(LEDGER).all() as Record<string, unknown>[])
    const liteBalances = norm(sqlite.query(BALANCES).all() as Record<string, unknown>[])
    const liteVerifications = (sqlite.query('SELECT count(*) AS n FROM verifications').get() as { n: number }).n
    sqlite.close()
    const [pgLedger, pgBalances] = await pgSnapshot(url, async (sql) => [norm(await sql.unsafe(LEDGER)), norm(await sql.unsafe(PG_BALANCES))])
    expect(pgLedger).toEqual(liteLedger)
    expect(pgBalances).toEqual(liteBalances)
    expect(copied.copied.verifications).toBe(liteVerifications)
    expect(liteBalances.find((b) => b.name === 'acme')!.balance).toBeLessThan(3000)
    expect(
      await pgSnapshot(url, async (sql) => [
        await sql.unsafe("SELECT name, role FROM operators WHERE name = 'carol'"),
        await sql.unsafe('SELECT name, custom_text FROM accounts ORDER BY name'),
      ]),
    ).toEqual([
      [{ name: 'carol', role: 'viewer' }],
      [
        { name: 'acme', custom_text: false },
        { name: 'default', custom_text: true },
      ],
    ])

    // A second copy into the same (now used) database: refused, nothing changed.
    const again = cli(lite, 'db', 'copy', '--to', url)
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('the target database is not empty (its table accounts has 2 rows): db copy writes only into an empty database')

    // A server on the copy, with the SQLite deployment's generated secret file.
    const pg = pgEnv('dbcopy-pg', url, TOML)
    envs.push(pg)
    await Bun.write(pg.configFile, (await Bun.file(pg.configFile).text()).replace(/^secret = ".*"$/m, `secret_file = "${join(lite.dir, 'otpd.secret')}"`))
    const pgServer = await startServer(pg)
    servers.push(pgServer)
    for (const k of [k1, k2]) expect((await post(pgServer.url, '/api/v1/send', k.key, { channel: 'sms', recipient: '+15550100001' })).status).toBe(200)
    expect((await post(pgServer.url, '/api/v1/send', kOff.key, { channel: 'sms', recipient: '+15550100001' })).json.error).toBe('API key is disabled')
    expect((await post(pgServer.url, '/api/v1/send', kGone.key, { channel: 'sms', recipient: '+15550100001' })).status).toBe(401)
    // The code sent before the copy verifies after it, once; the recipient's minute is still full.
    expect((await post(pgServer.url, '/api/v1/verify', k1.key, { verification_id: pending.json.verification_id, code: '246810' })).json.verified).toBe(true)
    expect((await post(pgServer.url, '/api/v1/send', k1.key, { channel: 'sms', recipient: '+14155550122' })).status).toBe(429)
    // Three failures carried over: the fourth wrong code continues the count.
    const fourth = await post(pgServer.url, '/api/v1/verify', k2.key, { verification_id: wrong.json.verification_id, code: '11111' })
    expect(fourth.json.message).toBe('Invalid code')
    const attempts = await pgSnapshot(url, (sql) => sql.unsafe('SELECT failed_attempts FROM verifications WHERE id = $1', [wrong.json.verification_id]))
    expect(attempts[0].failed_attempts).toBe(4)
    // The endpoint and the account's setting came along.
    expect(json(pg, 'webhooks', 'list').map((w: { id: number; url: string }) => [w.id, w.url])).toEqual([[hook.id, 'http://127.0.0.1:9/otpd-events']])
    const limits = await pgSnapshot(url, (sql) => sql.unsafe("SELECT daily_credit_limit FROM accounts WHERE name = 'acme'"))
    expect(limits[0].daily_credit_limit).toBe(100000)
    // New sends spend from the copied balance; the ledger still balances.
    const before = json(pg, 'credits', 'balance', '--account', 'acme').balance
    expect(before).toBe(liteBalances.find((b) => b.name === 'acme')!.balance)
    expect((await post(pgServer.url, '/api/v1/send', k2.key, { channel: 'sms', recipient: '+14155550133' })).status).toBe(200)
    expect(json(pg, 'credits', 'balance', '--account', 'acme').balance).toBe(before - 1)
    expect(await ledgerViolations(url, { sends: new Map([...loads[0]!.ack.sends, ...loads[1]!.ack.sends]) })).toEqual([])
  })

  test('a copy that does not match its source is rolled back: the target stays empty', async () => {
    const lite = makeEnv('dbcopy-mismatch', TOML)
    envs.push(lite)
    json(lite, 'keys', 'create', '--init')
    json(lite, 'credits', 'add', '50')
    json(lite, 'credits', 'add', '25', '--note', 'second')
    const url = await freshDatabase('dbcopy_mismatch')
    const target = new SQL(url)
    const source = new Database(lite.dbPath)
    try {
      // Damage on the way in: a trigger that changes every amount written to the ledger.
      const migrate = async (sql: SQL) => {
        await applyMigrations(sql, 'test')
        await sql.unsafe(`CREATE FUNCTION bump() RETURNS trigger AS $$ BEGIN NEW.amount := NEW.amount + 1; RETURN NEW; END $$ LANGUAGE plpgsql`)
        await sql.unsafe('CREATE TRIGGER bump BEFORE INSERT ON credit_ledger FOR EACH ROW EXECUTE FUNCTION bump()')
      }
      await expect(copyToPostgres(source, target, { now: Date.now(), retentionDays: 7, migrate })).rejects.toThrow(
        'the copy does not match its source (nothing was written): the ledgers differ',
      )
      const counts = await target.unsafe(
        `SELECT (SELECT count(*) FROM credit_ledger)::int AS ledger, (SELECT count(*) FROM api_keys)::int AS keys, (SELECT count(*) FROM settings)::int AS settings`,
      )
      expect(counts[0]).toEqual({ ledger: 0, keys: 0, settings: 0 })
    } finally {
      source.close()
      await target.close()
    }
  })

  test('a target that an earlier otpd migrated and never used is empty: the copy migrates it on and spreads each balance', async () => {
    const lite = makeEnv('dbcopy-earlier', TOML)
    envs.push(lite)
    json(lite, 'keys', 'create', '--init')
    json(lite, 'credits', 'add', '50')
    const url = await freshDatabase('dbcopy_earlier')
    const earlier = new SQL(url)
    await migrateUntil(earlier, '0007_balance_stripes').finally(() => earlier.close())
    expect(json(lite, 'db', 'copy', '--to', url).checked).toBe(true)
    const rows = await pgSnapshot(url, (sql) => sql.unsafe(PG_BALANCES))
    expect(norm(rows)).toEqual([{ name: 'default', balance: 50 }])
  })

  test('a SQLite database a running server holds is refused before anything is written; once it stops, the copy runs', async () => {
    const lite = makeEnv('dbcopy-held', TOML)
    envs.push(lite)
    json(lite, 'keys', 'create', '--init')
    const server = await startServer(lite)
    servers.push(server)
    const url = await freshDatabase('dbcopy_held')
    const held = cli(lite, 'db', 'copy', '--to', url)
    expect([held.code, held.stderr]).toEqual([
      1,
      `otpd: error: ${lite.dbPath} is open in another process (a running otpd serve, or a command still at work): stop otpd first (systemctl stop otpd), then run otpd db copy again\n`,
    ])
    const tables = async () =>
      pgSnapshot(url, async (sql) => Number((await sql.unsafe("SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'public'"))[0].n))
    expect(await tables()).toBe(0)
    await stopNodes([server])
    expect(json(lite, 'db', 'copy', '--to', url).checked).toBe(true)
    expect(await tables()).toBeGreaterThan(0)
  })

  test('refusals: a config already on PostgreSQL, a bad URL, a database that is not ours', async () => {
    const lite = makeEnv('dbcopy-refuse', TOML)
    envs.push(lite)
    json(lite, 'keys', 'create', '--init')
    const bad = cli(lite, 'db', 'copy', '--to', 'mysql://x@y/z')
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain("--to must be a postgres:// URL (postgres://user@host:5432/database), not 'mysql://x@y/z'")
    const url = await freshDatabase('dbcopy_foreign')
    await pgSnapshot(url, async () => undefined)
    const other = new SQL(url)
    await other.unsafe('CREATE TABLE invoices (id int)')
    await other.close()
    const foreign = cli(lite, 'db', 'copy', '--to', url)
    expect(foreign.code).toBe(1)
    expect(foreign.stderr).toContain('the target database is not empty (it has the table invoices)')
    const onPg = pgEnv('dbcopy-onpg', await freshDatabase('dbcopy_onpg'), TOML)
    envs.push(onPg)
    const r = cli(onPg, 'db', 'copy', '--to', url)
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('this configuration already uses PostgreSQL (database.url)')
  })
})
