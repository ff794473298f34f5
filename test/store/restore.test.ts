/**
 * `otpd restore FILE` (docs/operating.md#backup-and-restore) through the real
 * binary: refused while a server has the database open, without the backup's
 * secret, or with another; otherwise the backup takes the database's place,
 * the one it replaced kept beside it, and a server on it takes the backup's
 * keys and balances. On PostgreSQL it is refused for pg_restore.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cliEnv, post, startServer } from '../kit/cli.ts'
import { ON_PG, testSqliteOnly } from '../kit/harness.ts'

setDefaultTimeout(30_000)

const send = (url: string, key: string) => post(url, '/api/v1/send', key, { channel: 'sms', recipient: '+15550100001' })

testSqliteOnly('a backup restored on another machine: the secret is checked, the old database kept, and the keys and balance work', async () => {
  const from = await cliEnv()
  const key = from.json('keys', 'create', '--name', 'shop').key
  from.json('credits', 'add', '42')
  const backup = join(from.dir, 'b.db')
  from.json('backup', backup)

  // The other machine already has a database of its own, made with another secret.
  const to = await cliEnv()
  const ownKey = to.json('keys', 'create', '--name', 'own').key
  const database = join(to.dir, 'otpd.db')
  const wrong = to.run('restore', backup)
  expect([wrong.code, wrong.stdout]).toEqual([1, ''])
  expect(wrong.stderr).toBe(
    `otpd: error: ${backup} was not made with the secret in ${join(to.dir, 'otpd.secret')}: give the secret kept with this backup (--secret FILE, or the config's server.secret as it was then)\n`,
  )
  expect(to.json('keys', 'list').map((k: { name: string }) => k.name)).toEqual(['own'])

  const r = to.json('restore', backup, '--secret', join(from.dir, 'otpd.secret'))
  expect(r).toMatchObject({ database, secret: join(to.dir, 'otpd.secret'), keys: 1, accounts: 1 })
  expect(r.replaced).toStartWith(`${database}.before-restore-`)
  expect(existsSync(r.replaced)).toBe(true)
  expect(readFileSync(join(to.dir, 'otpd.secret'), 'utf8')).toBe(readFileSync(join(from.dir, 'otpd.secret'), 'utf8'))
  expect(readdirSync(to.dir).filter((f) => f.startsWith('otpd.secret.before-restore-'))).toHaveLength(1)

  const server = await startServer(to)
  expect((await send(server.url, key)).status).toBe(200)
  expect((await send(server.url, ownKey)).status).toBe(401)
  expect(to.json('credits', 'balance').balance).toBe(42)
})

testSqliteOnly('refused while a server uses the database, with nothing changed; then it runs once the server stops', async () => {
  const env = await cliEnv()
  env.json('keys', 'create')
  const backup = join(env.dir, 'b.db')
  env.json('backup', backup)
  env.json('keys', 'create', '--name', 'after the backup')
  const server = await startServer(env)
  const busy = env.run('restore', backup)
  expect(busy.code).toBe(1)
  expect(busy.stderr).toBe(
    `otpd: error: ${join(env.dir, 'otpd.db')} is open in another process (a running otpd serve, or a command still at work): stop otpd first (systemctl stop otpd), then run otpd restore again\n`,
  )
  expect(readdirSync(env.dir).filter((f) => f.includes('before-restore'))).toEqual([])
  await server.stop()
  const text = env.run('restore', backup)
  expect(text.code).toBe(0)
  expect(text.stdout).toStartWith(`restored ${backup} to ${join(env.dir, 'otpd.db')} (1 API key, 1 account); server secret: ${join(env.dir, 'otpd.secret')}\n`)
  expect(text.stdout).toContain('The database it replaced is kept at ')
  expect(env.json('keys', 'list')).toHaveLength(1)
})

testSqliteOnly('no secret, a file that is not a backup, a missing file, the live database: each refused in one line', async () => {
  const from = await cliEnv()
  from.json('keys', 'create')
  const backup = join(from.dir, 'b.db')
  from.json('backup', backup)
  const to = await cliEnv('', {}, { noDatabase: true })
  expect(to.run('restore', backup).stderr).toBe(
    `otpd: error: there is no server secret at ${join(to.dir, 'otpd.secret')}: pass --secret FILE, the otpd.secret kept with the backup\n`,
  )
  const junk = join(to.dir, 'junk.db')
  writeFileSync(junk, 'not a database at all, just some text that is long enough to look like one'.repeat(100))
  expect(to.run('restore', junk, '--secret', join(from.dir, 'otpd.secret')).stderr).toStartWith(`otpd: error: ${junk} is not an otpd backup`)
  expect(to.run('restore', join(to.dir, 'nothing.db')).stderr).toBe(`otpd: error: no backup at ${join(to.dir, 'nothing.db')}\n`)
  expect(from.run('restore', join(from.dir, 'otpd.db')).stderr).toBe(
    `otpd: error: ${join(from.dir, 'otpd.db')} is the live database: restore from a backup file\n`,
  )
  expect(existsSync(join(to.dir, 'otpd.db'))).toBe(false)
  // On a new machine with the secret: restored, nothing replaced.
  const r = to.json('restore', backup, '--secret', join(from.dir, 'otpd.secret'))
  expect([r.keys, r.replaced]).toEqual([1, null])
})

test.skipIf(!ON_PG)('on PostgreSQL, restore is refused in favour of pg_restore', async () => {
  const env = await cliEnv()
  const r = env.run('restore', join(env.dir, 'b.db'))
  expect([r.code, r.stderr]).toEqual([
    1,
    'otpd: error: otpd restore restores a SQLite backup; a PostgreSQL database is restored with its own tools (pg_restore): see "Backups" in multi-node.md\n',
  ])
})
