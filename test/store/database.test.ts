import { Database } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrationFiles, migrationJournal } from '../../src/store/sqlite/migrations/index.ts'
import { applyMigrations, migrationsCurrent, openDatabase } from '../../src/store/sqlite/db.ts'
import { loadSecret } from '../../src/store/secret.ts'
import { harnessPerTest, sqliteClient, TEST, testSqliteOnly } from '../kit/harness.ts'

const start = harnessPerTest()

test('every migration drizzle-kit wrote is embedded, and nothing else', () => {
  const dir = join(import.meta.dir, '..', '..', 'src', 'store', 'sqlite', 'migrations')
  const onDisk = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .map((f) => f.slice(0, -4))
    .sort()
  expect(migrationJournal.entries.map((e) => e.tag).sort()).toEqual(onDisk)
  expect(Object.keys(migrationFiles).sort()).toEqual(onDisk)
})

testSqliteOnly('a fresh database is migrated, in WAL mode, with foreign keys and the default account', async () => {
  const h = await start()
  const client = sqliteClient(h.server)
  expect(client.query('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' })
  expect(client.query('PRAGMA foreign_keys').get()).toEqual({ foreign_keys: 1 })
  expect(client.query('PRAGMA synchronous').get()).toEqual({ synchronous: 2 }) // FULL
  expect(client.query('PRAGMA busy_timeout').get()).toEqual({ timeout: 5000 })
  expect(migrationsCurrent(client)).toBe(true)
  expect((await h.server.admin.listAccounts()).map((a) => a.name)).toEqual(['default'])
})

testSqliteOnly('migrations apply once: reopening (or a second process) changes nothing', async () => {
  const h = await start()
  const client = new Database(h.dbPath)
  applyMigrations(client)
  applyMigrations(client)
  expect(client.query('SELECT count(*) AS n FROM __drizzle_migrations').get()).toEqual({ n: migrationJournal.entries.length })
  expect(client.query("SELECT count(*) AS n FROM accounts WHERE name = 'default'").get()).toEqual({ n: 1 })
  client.close()
})

testSqliteOnly('database.synchronous = NORMAL is applied', async () => {
  const h = await start({ config: { database: { synchronous: 'NORMAL' } } })
  expect(sqliteClient(h.server).query('PRAGMA synchronous').get()).toEqual({ synchronous: 1 })
})

testSqliteOnly('the generated secret is 0600 and a new data directory 0700', () => {
  const root = mkdtempSync(join(tmpdir(), 'otpd-perm-'))
  try {
    const path = join(root, 'data', 'otpd.db')
    openDatabase({ path }).$client.close()
    expect(statSync(join(root, 'data')).mode & 0o777).toBe(0o700)
    loadSecret(undefined, path)
    expect(statSync(join(root, 'data', 'otpd.secret')).mode & 0o777).toBe(0o600)
    // The same secret on every load: keys keep working across restarts.
    expect(loadSecret(undefined, path)).toEqual(loadSecret(undefined, path))
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})

test('the credit ledger balances: grants - debits + refunds = balance', async () => {
  const h = await start({ credits: 5 })
  await h.send({ channel: 'sms', recipient: '+14155550001' })
  h.delivery.fail = true
  await h.send({ channel: 'sms', recipient: '+14155550002' })
  h.delivery.fail = false
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  const rows = (await h.sql('SELECT kind, sum(amount) AS total FROM credit_ledger GROUP BY kind ORDER BY kind')).map((r) => ({
    kind: r.kind,
    total: Number(r.total),
  }))
  expect(rows).toEqual([
    { kind: 'debit', total: 2 },
    { kind: 'grant', total: 5 },
    { kind: 'refund', total: 1 },
  ])
  expect((await h.server.admin.balance()).balance).toBe(5 - 2 + 1)
})

test('a request records when its key was last used', async () => {
  const h = await start()
  expect((await h.server.admin.listKeys())[0]!.lastUsedAt).toBeNull()
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  expect((await h.server.admin.listKeys())[0]!.lastUsedAt).toBe(h.clock.now())
})
