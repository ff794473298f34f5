/**
 * `otpd backup FILE` (store/sqlite/backup.ts): what it prints and refuses, and a
 * backup taken while a real server takes sends and verifies restores, by the
 * steps of docs/operating.md, into a server whose keys, balances and pending
 * verifications all work.
 */
import { Database } from 'bun:sqlite'
import { expect, setDefaultTimeout } from 'bun:test'
import { copyFileSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { unthrottledNoop } from '../kit/processes.ts'
import { cliEnv, post, startServer } from '../kit/cli.ts'
import { testSqliteOnly } from '../kit/harness.ts'
import { waitFor } from '../kit/wait-for.ts'

setDefaultTimeout(60_000)

testSqliteOnly('backup writes a private copy, says where the secret is, and never replaces a file without --force', async () => {
  const env = await cliEnv()
  env.json('keys', 'create')
  const db = join(env.dir, 'otpd.db')
  const file = join(env.dir, 'b.db')
  const r = env.run('backup', file)
  expect(r.code).toBe(0)
  const bytes = statSync(file).size
  expect(r.stdout).toBe(
    `backed up ${db} to ${file} (${(bytes / 1024).toFixed(1)} KiB)\n` +
      `Keep the server secret (${join(env.dir, 'otpd.secret')}) with this backup: without it no API key in the backup works.\n` +
      'To restore it: stop otpd, then otpd restore FILE --secret SECRET-FILE (see "Backup and restore" in /usr/share/doc/otpd/docs/operating.md).\n',
  )
  expect(statSync(file).mode & 0o777).toBe(0o600)
  // Nothing secret in the output: not the secret, not a key.
  expect(r.stdout + r.stderr).not.toContain(readFileSync(join(env.dir, 'otpd.secret'), 'utf8').trim())

  writeFileSync(file, 'keep me')
  const again = env.run('backup', file)
  expect({ code: again.code, stderr: again.stderr }).toEqual({
    code: 1,
    stderr: `otpd: error: ${file} already exists: choose a new name, or pass --force to replace it\n`,
  })
  expect(Bun.file(file).size).toBe(7)
  expect(env.json('backup', file, '--force')).toEqual({ file, bytes, database: db, secret: join(env.dir, 'otpd.secret') })
  expect(integrity(file)).toBe('ok')
  // No temporary file left beside it.
  expect(readdirSync(env.dir).filter((f) => f.endsWith('.tmp'))).toEqual([])

  const nowhere = join(env.dir, 'missing', 'b.db')
  expect(env.run('backup', nowhere).stderr).toBe(`otpd: error: cannot write the backup ${nowhere}: the directory ${join(env.dir, 'missing')} does not exist\n`)
  const live = env.run('backup', db, '--force')
  expect(live.stderr).toBe(`otpd: error: ${db} is the live database: back up to another file\n`)
})

testSqliteOnly('with server.secret, the backup names the setting to keep, not a file', async () => {
  const env = await cliEnv('[server]\nsecret = "a-configured-server-secret-of-40-chars-xx"\n', {}, { noDatabase: true })
  env.json('accounts', 'create', 'acme', '--init')
  const r = env.json('backup', join(env.dir, 'b.db'))
  expect(r.secret).toBe('the server.secret setting')
})

testSqliteOnly('a backup taken under load restores into a server whose keys, balances and pending verifications work', async () => {
  const env = await cliEnv(unthrottledNoop())
  const key = env.json('keys', 'create').key
  env.json('credits', 'add', '100000')
  const server = await startServer(env)
  const code = (i: number) => String(100000 + ((i * 7919) % 900000))
  const recipient = (i: number) => `+1415${String(i).padStart(7, '0')}`

  // Sent and answered before the backup starts, and never verified: pending in the backup.
  const pending: { id: string; code: string }[] = []
  for (let i = 0; i < 20; i++) {
    const r = await post(server.url, '/api/v1/send', key, { channel: 'sms', recipient: recipient(i), code: code(i) })
    expect(r.status).toBe(200)
    pending.push({ id: r.json.verification_id, code: code(i) })
  }

  // Load: 8 workers, each sending a code and verifying it (some wrong first), until the backup is done.
  let done = false
  let n = 1000
  let requests = 0
  const failures: string[] = []
  const worker = async () => {
    while (!done) {
      const i = n++
      const sent = await post(server.url, '/api/v1/send', key, { channel: 'sms', recipient: recipient(i), code: code(i) })
      requests++
      if (sent.status !== 200) failures.push(`send ${sent.status}`)
      if (i % 3 === 0) await post(server.url, '/api/v1/verify', key, { verification_id: sent.json.verification_id, code: '000000' })
      const v = await post(server.url, '/api/v1/verify', key, { verification_id: sent.json.verification_id, code: code(i) })
      requests += 2
      if (v.json.verified !== true) failures.push(`verify ${v.status} ${JSON.stringify(v.json)}`)
    }
  }
  const load = Promise.all(Array.from({ length: 8 }, worker))
  await waitFor(() => requests >= 30, { what: 'the load to be under way' })
  const file = join(env.dir, 'backup.db')
  const before = requests
  const backup = await env.runAsync('backup', file)
  const during = requests - before
  await waitFor(() => requests >= before + during + 30, { what: 'the load to go on after the backup' })
  done = true
  await load
  expect(backup.code).toBe(0)
  expect(backup.stdout).toContain(`backed up ${join(env.dir, 'otpd.db')} to ${file}`)
  expect(failures).toEqual([])
  expect(during).toBeGreaterThan(0) // the server answered while the backup ran
  await server.stop()

  // A snapshot of a moment: whole, and every balance is its ledger's sum.
  expect(integrity(file)).toBe('ok')
  const check = new Database(file, { readonly: true })
  const ledger = check
    .query<{ balance: number; sum: number }, []>(
      `SELECT a.balance, coalesce((SELECT sum(CASE kind WHEN 'debit' THEN -amount ELSE amount END) FROM credit_ledger l WHERE l.account_id = a.id), 0) AS sum FROM accounts a`,
    )
    .all()
  const sends = check.query<{ n: number }, []>('SELECT count(*) AS n FROM verifications').get()!.n
  check.close()
  for (const row of ledger) expect(row.balance).toBe(row.sum)
  expect(ledger.find((r) => r.balance < 100000)).toBeDefined()
  expect(sends).toBeGreaterThan(pending.length) // it holds sends made under load too

  // Restore as docs/operating.md says, on a new machine: the backup at database.path, the secret beside it.
  const restored = await cliEnv(unthrottledNoop(), {}, { noDatabase: true })
  const db = join(restored.dir, 'otpd.db')
  copyFileSync(file, db)
  // Without its secret the restore is refused, not silently given a new one.
  expect(restored.run('keys', 'list').stderr).toContain(`the server secret ${join(restored.dir, 'otpd.secret')} is missing`)
  copyFileSync(join(env.dir, 'otpd.secret'), join(restored.dir, 'otpd.secret'))
  const balance = restored.json('credits', 'balance').balance
  expect(balance).toBe(ledger[0]!.balance)

  const again = await startServer(restored)
  for (const p of pending) {
    const v = await post(again.url, '/api/v1/verify', key, { verification_id: p.id, code: p.code })
    expect(v.json).toMatchObject({ verified: true })
  }
  const sent = await post(again.url, '/api/v1/send', key, { channel: 'sms', recipient: '+15550100001' })
  expect(sent.status).toBe(200)
  expect((await post(again.url, '/api/v1/verify', key, { verification_id: sent.json.verification_id, code: '123456' })).json.verified).toBe(true)
  expect(restored.json('credits', 'balance').balance).toBe(balance)
})

function integrity(file: string): string {
  const db = new Database(file, { readonly: true })
  try {
    return db.query<{ integrity_check: string }, []>('PRAGMA integrity_check').get()!.integrity_check
  } finally {
    db.close()
  }
}
