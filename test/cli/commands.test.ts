import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { cliEnv, type CliEnv } from '../kit/cli.ts'

// These tests start `otpd` processes; bunfig.toml cannot raise bun's 5 s default per file.
setDefaultTimeout(30_000)

let env: CliEnv

describe('help', () => {
  test('otpd --help lists every command', async () => {
    env = await cliEnv()
    const r = env.run('--help')
    expect(r.code).toBe(0)
    for (const c of ['serve', 'keys', 'credits', 'accounts', 'config', 'version']) expect(r.stdout).toContain(`  ${c}`)
  })

  test.each([
    ['serve'],
    ['keys', 'create'],
    ['keys', 'list'],
    ['keys', 'disable'],
    ['keys', 'enable'],
    ['keys', 'revoke'],
    ['credits', 'add'],
    ['credits', 'balance'],
    ['credits', 'history'],
    ['accounts', 'create'],
    ['accounts', 'list'],
    ['accounts', 'set'],
    ['config', 'check'],
    ['version'],
  ] as string[][])('otpd %s %s --help shows --config and an example', async (...cmd: string[]) => {
    env = await cliEnv()
    const r = env.run(...cmd, '--help')
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('--config')
    expect(r.stdout).toMatch(/Examples?:\n {2}\$ otpd /)
  })
})

describe('keys', () => {
  test('create prints the key once; --json has key, id, prefix, name, account', async () => {
    env = await cliEnv()
    const k = env.json('keys', 'create', '--name', 'backend')
    expect(Object.keys(k).sort()).toEqual(['account', 'id', 'key', 'name', 'prefix'])
    expect(k.key).toMatch(/^otpd_[0-9A-Za-z]{32,}$/)
    expect(k.prefix).toBe(k.key.slice(5, 13))
    expect(k).toMatchObject({ id: 1, name: 'backend', account: 'default' })
    const plain = env.run('keys', 'create')
    expect(plain.code).toBe(0)
    expect(plain.stdout.split('\n')[0]).toMatch(/^otpd_[0-9A-Za-z]{40}$/)
    const list = env.run('keys', 'list')
    expect(list.stdout).toContain(k.prefix)
    expect(list.stdout).not.toContain(k.key)
  })

  test('disable, enable and revoke by id or prefix; a revoked key stays revoked', async () => {
    env = await cliEnv()
    const k = env.json('keys', 'create')
    expect(env.json('keys', 'disable', String(k.id)).status).toBe('disabled')
    expect(env.json('keys', 'enable', k.prefix).status).toBe('active')
    expect(env.json('keys', 'revoke', k.key).status).toBe('revoked')
    const again = env.run('keys', 'enable', String(k.id))
    expect(again.code).toBe(1)
    expect(again.stderr).toBe(`otpd: error: key ${k.id} (${k.prefix}) is revoked and cannot be changed; create a new key instead\n`)
    expect(env.json('keys', 'list')[0].status).toBe('revoked')
  })

  test('an unknown key reference is one line and exit 1', async () => {
    env = await cliEnv()
    const r = env.run('keys', 'disable', 'nope')
    expect(r.code).toBe(1)
    expect(r.stderr).toBe("otpd: error: no key has id or prefix 'nope' (see: otpd keys list)\n")
  })

  test('keys belong to the account given', async () => {
    env = await cliEnv()
    env.run('accounts', 'create', 'acme')
    env.json('keys', 'create', '--account', 'acme')
    env.json('keys', 'create')
    expect(env.json('keys', 'list', '--account', 'acme').map((k: any) => k.account)).toEqual(['acme'])
    expect(env.json('keys', 'list')).toHaveLength(2)
    const r = env.run('keys', 'create', '--account', 'ghost')
    expect(r.code).toBe(1)
    expect(r.stderr).toBe("otpd: error: account 'ghost' does not exist (create it with: otpd accounts create ghost)\n")
  })
})

describe('credits', () => {
  test('add, balance and history', async () => {
    env = await cliEnv()
    expect(env.json('credits', 'balance')).toEqual({ account: 'default', balance: 0 })
    expect(env.json('credits', 'add', '100')).toEqual({ account: 'default', balance: 100 })
    expect(env.json('credits', 'add', '5', '--note', 'bonus')).toEqual({ account: 'default', balance: 105 })
    const h = env.json('credits', 'history')
    expect(h.account).toBe('default')
    expect(h.entries.map((e: any) => [e.kind, e.amount, e.note])).toEqual([
      ['grant', 5, 'bonus'],
      ['grant', 100, null],
    ])
  })

  test.each([['0'], ['-5'], ['1.5'], ['ten'], ['1000000001']])('credits add %s is refused', async (amount) => {
    env = await cliEnv()
    const r = env.run('credits', 'add', amount)
    expect(r.code).not.toBe(0)
    expect(r.stderr.trim().split('\n')[0]).toMatch(/amount must be a whole number|unknown option/)
    expect(env.json('credits', 'balance').balance).toBe(0)
  })
})

describe('accounts', () => {
  test('create, list and set the code length', async () => {
    env = await cliEnv()
    env.run('accounts', 'create', 'acme')
    expect(env.json('accounts', 'set', 'acme', '--code-length', '8')).toEqual({ name: 'acme', code_length: 8 })
    const list = env.json('accounts', 'list')
    expect(list.map((a: any) => [a.name, a.code_length])).toEqual([
      ['default', 6],
      ['acme', 8],
    ])
    const dup = env.run('accounts', 'create', 'acme')
    expect(dup.code).toBe(1)
    expect(dup.stderr).toBe("otpd: error: account 'acme' already exists\n")
  })

  test.each([['3'], ['11']])('a code length of %s is refused', async (n) => {
    env = await cliEnv()
    const r = env.run('accounts', 'set', 'default', '--code-length', n)
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(`otpd: error: code length must be an integer from 4 to 10, got '${n}'\n`)
  })
})

describe('config and version', () => {
  test('config check accepts a good file and names every problem of a bad one', async () => {
    env = await cliEnv()
    expect(env.run('config', 'check').code).toBe(0)
    expect(env.json('config', 'check')).toMatchObject({ ok: true, log_only: ['sms', 'email', 'voice', 'whatsapp'] })
    const bad = await cliEnv('[limits]\nrecipient_per_hour = -1\n[channels]\nsms = ["nowhere"]\n')
    try {
      const r = bad.run('config', 'check')
      expect(r.code).toBe(1)
      expect(r.stderr).toContain('limits.recipient_per_hour must be a whole number from 1 to 1000000000 (got -1)')
      // A broken config stops every other command too, with one line.
      const k = bad.run('keys', 'list')
      expect(k.code).toBe(1)
      expect(k.stderr.trim().split('\n')).toHaveLength(1)
    } finally {
      bad.close()
    }
  })

  test('version and --version', async () => {
    env = await cliEnv()
    expect(env.run('version').stdout).toMatch(/^otpd \d+\.\d+\.\d+ \(bun \d+\.\d+\.\d+\)\n$/)
    expect(env.json('version').version).toMatch(/^\d+\.\d+\.\d+$/)
    // One version string: --version prints what `version` prints.
    expect(env.run('--version').stdout).toBe(env.run('version').stdout)
  })
})
