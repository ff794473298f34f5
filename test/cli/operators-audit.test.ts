/**
 * `otpd operators` and `otpd audit list` (docs/console.md): operators made
 * and managed from the CLI, passwords generated once or read from stdin
 * (at least 12 characters) and stored as argon2id hashes; and the audit
 * entries every changing command writes, as the OS user or `--operator`,
 * with source `cli`, read back with `otpd audit list --json`.
 */
import { Database } from 'bun:sqlite'
import { expect, setDefaultTimeout, test } from 'bun:test'
import { SQL } from 'bun'
import { userInfo } from 'node:os'
import { join } from 'node:path'
import { cliEnv, type CliEnv } from '../kit/cli.ts'

setDefaultTimeout(60_000)

let env: CliEnv

async function passwordHash(e: CliEnv, name: string): Promise<string> {
  if (e.databaseUrl !== undefined) {
    const sql = new SQL({ url: e.databaseUrl, max: 1 })
    try {
      const rows = (await sql.unsafe('SELECT password_hash FROM operators WHERE name = $1', [name])) as { password_hash: string }[]
      return rows[0]!.password_hash
    } finally {
      await sql.close()
    }
  }
  const db = new Database(join(e.dir, 'otpd.db'), { readonly: true })
  try {
    return (db.query('SELECT password_hash FROM operators WHERE name = ?').get(name) as { password_hash: string }).password_hash
  } finally {
    db.close()
  }
}

test('operators add prints a generated password once; only its argon2id hash is stored; list never shows it', async () => {
  env = await cliEnv()
  const r = env.run('operators', 'add', 'alice')
  expect(r.code).toBe(0)
  const password = r.stdout.split('\n')[0]!
  expect(password).toMatch(/^[0-9A-Za-z]{24}$/)
  expect(r.stdout).toContain("Added operator 'alice'")
  const hash = await passwordHash(env, 'alice')
  expect(hash).toStartWith('$argon2id$')
  expect(hash).not.toContain(password)
  expect(await Bun.password.verify(password, hash)).toBe(true)
  const list = env.run('operators', 'list')
  expect(list.stdout).toContain('alice')
  expect(list.stdout).not.toContain(password)
  expect(env.json('operators', 'list')).toEqual([
    { id: 1, name: 'alice', role: 'admin', status: 'active', created_at: expect.any(String), password_changed_at: expect.any(String) },
  ])
  const again = env.run('operators', 'add', 'alice')
  expect(again.code).toBe(1)
  expect(again.stderr).toBe("otpd: error: operator 'alice' already exists\n")
})

test('operators add --password-stdin: at least 12 characters, one line', async () => {
  env = await cliEnv()
  const short = env.runWithInput('elevenchars\n', 'operators', 'add', 'bob', '--password-stdin')
  expect(short.code).toBe(1)
  expect(short.stderr).toBe('otpd: error: the password must be at least 12 characters long\n')
  const two = env.runWithInput('first line is long\nsecond\n', 'operators', 'add', 'bob', '--password-stdin')
  expect(two.code).toBe(1)
  const ok = env.runWithInput('twelve chars\n', 'operators', 'add', 'bob', '--password-stdin')
  expect(ok.code).toBe(0)
  expect(ok.stdout).toBe("added operator 'bob'\n")
  expect(await Bun.password.verify('twelve chars', await passwordHash(env, 'bob'))).toBe(true)
})

test('disable, enable and reset-password, each in the audit log as the OS user (or --operator), source cli', async () => {
  env = await cliEnv()
  env.run('operators', 'add', 'alice')
  expect(env.run('operators', 'disable', 'alice').stdout).toBe("operator 'alice' is disabled; 0 sessions ended\n")
  expect(env.json('operators', 'list')[0].status).toBe('disabled')
  env.run('operators', 'enable', 'alice', '--operator', 'night shift')
  const reset = env.run('operators', 'reset-password', 'alice')
  const password = reset.stdout.split('\n')[0]!
  expect(await Bun.password.verify(password, await passwordHash(env, 'alice'))).toBe(true)
  expect(env.run('operators', 'disable', 'nobody').stderr).toBe("otpd: error: operator 'nobody' does not exist (see: otpd operators list)\n")
  const me = userInfo().username
  const entries = env.json('audit', 'list')
  expect(entries.map((e: Record<string, unknown>) => [e.action, e.subject, e.operator, e.source])).toEqual([
    ['operator.password_reset', 'operator alice', me, 'cli'],
    ['operator.enabled', 'operator alice', 'night shift', 'cli'],
    ['operator.disabled', 'operator alice', me, 'cli'],
    ['operator.added', 'operator alice', me, 'cli'],
  ])
  expect(JSON.stringify(entries)).not.toContain(password)
})

test('operators add --role and operators set --role: the role is listed, checked, and each change is in the audit log', async () => {
  env = await cliEnv()
  expect(env.run('operators', 'add', 'carol', '--role', 'viewer').code).toBe(0)
  expect(env.json('operators', 'list')[0].role).toBe('viewer')
  expect(env.run('operators', 'list').stdout).toMatch(/carol +viewer +active/)
  const bad = env.run('operators', 'add', 'dave', '--role', 'root')
  expect(bad.code).not.toBe(0)
  expect(bad.stderr).toContain("'root' is invalid. Allowed choices are viewer, admin")
  expect(env.run('operators', 'set', 'carol').stderr).toContain("required option '--role <role>' not specified")
  expect(env.run('operators', 'set', 'carol', '--role', 'admin').stdout).toBe("operator 'carol' has the admin role\n")
  expect(env.run('operators', 'set', 'nobody', '--role', 'admin').stderr).toBe("otpd: error: operator 'nobody' does not exist (see: otpd operators list)\n")
  const entries = env.json('audit', 'list')
  expect(entries.map((e: Record<string, unknown>) => [e.action, e.subject, e.details])).toEqual([
    ['operator.role_changed', 'operator carol', { from: 'viewer', to: 'admin' }],
    ['operator.added', 'operator carol', { password: 'generated', role: 'viewer' }],
  ])
})

test('accounts set --locale, --otp-domain and --custom-text are audited, from and to', async () => {
  env = await cliEnv()
  expect(env.run('accounts', 'set', 'default', '--locale', 'es', '--otp-domain', 'login.example.com').code).toBe(0)
  expect(env.run('accounts', 'set', 'default', '--otp-domain', 'evil.example.net', '--custom-text', 'off', '--operator', 'mallory').code).toBe(0)
  const entries = env.json('audit', 'list', '--action', 'account.settings_changed')
  expect(entries.map((e: Record<string, unknown>) => [e.operator, e.subject, e.details])).toEqual([
    ['mallory', 'account default', { otpDomain: { from: 'login.example.com', to: 'evil.example.net' }, customText: { from: true, to: false } }],
    [userInfo().username, 'account default', { locale: { from: null, to: 'es' }, otpDomain: { from: null, to: 'login.example.com' } }],
  ])
})

test('the existing commands write their audit entries; the ledger note is in it; no secret is', async () => {
  env = await cliEnv()
  const key = env.json('keys', 'create', '--name', 'shop')
  env.run('keys', 'disable', String(key.id))
  env.run('credits', 'add', '100', '--note', 'invoice 42', '--operator', 'billing')
  env.run('credits', 'deduct', '5', '--note', 'correction')
  env.run('accounts', 'create', 'acme')
  env.run('accounts', 'set', 'acme', '--countries', 'US,CA', '--code-length', '8')
  env.run('fraud', 'unblock', 'UZ')
  const hook = env.json('webhooks', 'add', '--url', 'https://example.com/hooks')
  env.run('webhooks', 'rotate-secret', String(hook.id))
  env.run('webhooks', 'remove', String(hook.id))
  const entries = env.json('audit', 'list')
  expect(entries.map((e: Record<string, unknown>) => e.action).reverse()).toEqual([
    'key.created',
    'key.disabled',
    'credits.added',
    'credits.deducted',
    'account.created',
    'account.code_length_changed',
    'account.settings_changed',
    'fraud.unblocked',
    'webhook.added',
    'webhook.secret_rotated',
    'webhook.removed',
  ])
  const credits = env.json('audit', 'list', '--action', 'credits.added')
  expect(credits).toEqual([
    {
      id: expect.any(Number),
      at: expect.any(String),
      operator: 'billing',
      source: 'cli',
      action: 'credits.added',
      subject: 'account default',
      details: { amount: 100, note: 'invoice 42', balance: 100 },
    },
  ])
  expect(env.json('audit', 'list', '--by', 'billing').length).toBe(1)
  expect(env.json('audit', 'list', '--limit', '2').length).toBe(2)
  expect(env.json('audit', 'list', '--since', '1h').length).toBe(11)
  expect(env.json('audit', 'list', '--until', '2000-01-01T00:00:00Z').length).toBe(0)
  const all = JSON.stringify(entries)
  expect(all).not.toContain(key.key)
  expect(all).not.toContain(hook.secret)
  const table = env.run('audit', 'list')
  expect(table.stdout).toContain('credits.added')
  const bad = env.run('audit', 'list', '--action', 'nothing')
  expect(bad.code).toBe(1)
  expect(bad.stderr).toContain("unknown audit action 'nothing'")
  expect(env.run('audit', 'list', '--since', 'yesterday').code).toBe(1)
})

test('a command that fails writes no audit entry', async () => {
  env = await cliEnv()
  expect(env.run('credits', 'deduct', '5', '--note', 'more than there is').code).toBe(1)
  expect(env.run('keys', 'disable', '999').code).toBe(1)
  expect(env.json('audit', 'list')).toEqual([])
})

test('under sudo the audit log names the person behind it (SUDO_USER), not the user the command runs as; --operator still wins', async () => {
  env = await cliEnv('', { SUDO_USER: 'alice' })
  env.json('keys', 'create', '--name', 'shop')
  env.run('credits', 'add', '5', '--operator', 'billing')
  const entries = env.json('audit', 'list')
  expect(entries.map((e: Record<string, unknown>) => [e.action, e.operator, e.source])).toEqual([
    ['credits.added', 'billing', 'cli'],
    ['key.created', 'alice', 'cli'],
  ])
  expect(entries.map((e: Record<string, unknown>) => e.operator)).not.toContain(userInfo().username)
})
