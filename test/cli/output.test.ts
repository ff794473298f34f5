/**
 * CLI output: aligned tables for people and the `--json` shapes for scripts,
 * on every listing command; and `otpd config init`.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { formatTable } from '../../src/cli/table.ts'
import { cliEnv, post, startServer, type CliEnv, type RunningServer } from '../kit/cli.ts'

// Bun ignores bunfig's [test] timeout; these tests start processes and a server.
setDefaultTimeout(30_000)

let env: CliEnv
let server: RunningServer | undefined

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const READABLE = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/

/** The cells of one table line: runs of text separated by two or more spaces. */
function cells(line: string): { start: number; end: number; text: string }[] {
  return [...line.matchAll(/\S+(?: \S+)*/g)].map((m) => ({ start: m.index, end: m.index + m[0].length, text: m[0] }))
}

/**
 * Checks a printed table against its headings: every row has one cell per
 * column, left-aligned columns start where their heading starts, right-aligned
 * ones end where their heading ends. Returns the rows as text, by heading.
 */
function readTable(out: string, headings: string[], rightAligned: string[] = []): Record<string, string>[] {
  const [head, ...lines] = out.trimEnd().split('\n')
  const h = cells(head!)
  expect(h.map((c) => c.text)).toEqual(headings)
  return lines.map((line) => {
    const row = cells(line)
    expect(row).toHaveLength(headings.length)
    row.forEach((c, i) => {
      if (rightAligned.includes(headings[i]!)) expect([headings[i], c.end]).toEqual([headings[i], h[i]!.end])
      else expect([headings[i], c.start]).toEqual([headings[i], h[i]!.start])
    })
    return Object.fromEntries(row.map((c, i) => [headings[i]!, c.text]))
  })
}

describe('formatTable', () => {
  test('pads text columns on the right and number columns on the left, two spaces apart', () => {
    expect(
      formatTable(
        ['ID', 'NAME', 'AMOUNT', 'NOTE'],
        [
          [1, 'backend', 5, 'x'],
          [12, 'b', -100, 'longer note'],
        ],
      ),
    ).toBe(['ID  NAME     AMOUNT  NOTE', ' 1  backend       5  x', '12  b          -100  longer note', ''].join('\n'))
  })

  test('measures terminal columns, so wide characters keep the columns aligned', () => {
    expect(
      formatTable(
        ['NAME', 'STATUS'],
        [
          ['日本', 'active'],
          ['café', 'revoked'],
        ],
      ),
    ).toBe('NAME  STATUS\n日本  active\ncafé  revoked\n')
  })

  test('shows control characters escaped, so a cell never breaks a line', () => {
    expect(formatTable(['NOTE', 'X'], [['a\nb\tc\u0085\u001b[31m', 'y']])).toBe(`${'NOTE'.padEnd(23)}  X\na\\nb\\tc\\u0085\\u001b[31m  y\n`)
  })

  test('with no rows prints the headings alone', () => {
    expect(formatTable(['ID', 'NAME'], [])).toBe('ID  NAME\n')
  })
})

describe('keys list', () => {
  test('a table with prefix, name, account, status, created and last used ("never" when unused); --json for scripts', async () => {
    env = await cliEnv()
    env.run('accounts', 'create', 'acme')
    const used = env.json('keys', 'create', '--name', 'a rather long key name', '--account', 'acme')
    const unused = env.json('keys', 'create', '--name', 'b')
    const nameless = env.json('keys', 'create')
    env.json('keys', 'disable', String(unused.id))
    server = await startServer(env)
    expect((await post(server.url, '/api/v1/send', used.key, { channel: 'sms', recipient: '+15550100001' })).status).toBe(200)

    const r = env.run('keys', 'list')
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('')
    const rows = readTable(r.stdout, ['ID', 'PREFIX', 'NAME', 'ACCOUNT', 'STATUS', 'CREATED', 'LAST USED'], ['ID'])
    expect(rows.map((k) => [k.ID, k.PREFIX, k.NAME, k.ACCOUNT, k.STATUS, k['LAST USED'] === 'never'])).toEqual([
      ['1', used.prefix, 'a rather long key name', 'acme', 'active', false],
      ['2', unused.prefix, 'b', 'default', 'disabled', true],
      ['3', nameless.prefix, '-', 'default', 'active', true],
    ])
    for (const k of rows) expect(k.CREATED).toMatch(READABLE)
    expect(rows[0]!['LAST USED']).toMatch(READABLE)
    for (const k of [used, unused, nameless]) expect(r.stdout).not.toContain(k.key)

    const json = env.json('keys', 'list')
    expect(json).toHaveLength(3)
    for (const k of json) {
      expect(Object.keys(k)).toEqual(['id', 'prefix', 'name', 'account', 'status', 'created_at', 'last_used_at', 'expires_at'])
      expect(k.created_at).toMatch(ISO)
    }
    expect(json[0]).toMatchObject({ id: 1, prefix: used.prefix, name: 'a rather long key name', account: 'acme', status: 'active' })
    expect(json[0].last_used_at).toMatch(ISO)
    expect(json[1]).toMatchObject({ id: 2, name: 'b', status: 'disabled', last_used_at: null })
    expect(json[2]).toMatchObject({ id: 3, name: '', last_used_at: null })
    // The table shows the same instants as the JSON, readably.
    expect(rows[0]!.CREATED).toBe(json[0].created_at.replace('T', ' ').slice(0, 19) + ' UTC')
    expect(JSON.stringify(json)).not.toContain(used.key)
  })

  test('disable, enable and revoke --json print the key in the same shape as list', async () => {
    env = await cliEnv()
    const k = env.json('keys', 'create', '--name', 'x')
    const listed = env.json('keys', 'list')[0]
    expect(env.json('keys', 'revoke', k.prefix)).toEqual({ ...listed, status: 'revoked' })
  })

  test('with no keys it says so and names the command that makes one; --json is []', async () => {
    env = await cliEnv()
    expect(env.run('keys', 'list').stdout).toBe('none yet: otpd keys create --name NAME\n')
    expect(env.json('keys', 'list')).toEqual([])
  })
})

describe('accounts list and credits history', () => {
  test("accounts list: aligned, balances right-aligned, with each account's guard settings; --json with ISO times", async () => {
    env = await cliEnv()
    env.run('accounts', 'create', 'a-long-account-name')
    env.run('accounts', 'set', 'a-long-account-name', '--code-length', '8')
    env.run('accounts', 'set', 'a-long-account-name', '--countries', 'US,CA', '--daily-credit-limit', '500', '--test-recipients', 'off')
    env.run('credits', 'add', '12345', '--account', 'a-long-account-name')
    const rows = readTable(
      env.run('accounts', 'list').stdout,
      ['NAME', 'BALANCE', 'CODE LENGTH', 'COUNTRIES', 'DAILY CREDIT LIMIT', 'TEST RECIPIENTS', 'CREATED'],
      ['BALANCE'],
    )
    expect(rows.map((a) => [a.NAME, a.BALANCE, a['CODE LENGTH'], a.COUNTRIES, a['DAILY CREDIT LIMIT'], a['TEST RECIPIENTS']])).toEqual([
      ['default', '0', '6 (default)', '* (default)', 'none', 'on'],
      ['a-long-account-name', '12345', '8', 'US,CA', '500', 'off'],
    ])
    // The default account comes with the database; its creation time is not recorded.
    expect(rows.map((a) => a.CREATED)).toEqual(['-', expect.stringMatching(READABLE)])
    const json = env.json('accounts', 'list')
    expect(json[0].created_at).toBeNull()
    const keys = ['name', 'balance', 'code_length', 'countries', 'daily_credit_limit', 'test_recipients', 'created_at']
    expect(json.map((a: any) => Object.keys(a))).toEqual([keys, keys])
    expect(json[0]).toMatchObject({ name: 'default', countries: ['*'], daily_credit_limit: null, test_recipients: true })
    expect(json[1]).toMatchObject({
      name: 'a-long-account-name',
      balance: 12345,
      code_length: 8,
      countries: ['US', 'CA'],
      daily_credit_limit: 500,
      test_recipients: false,
    })
    expect(json[1].created_at).toMatch(ISO)
  })

  test('credits history: newest first, amounts signed so they add up to the balance; --json in the same terms', async () => {
    env = await cliEnv()
    env.run('credits', 'add', '1000', '--note', 'invoice 42')
    env.run('credits', 'add', '5')
    const key = env.json('keys', 'create').key
    server = await startServer(env)
    // A real recipient costs one credit (the log provider prints to the server's own output, kept by the helper).
    expect((await post(server.url, '/api/v1/send', key, { channel: 'sms', recipient: '+14155550123' })).status).toBe(200)

    const r = env.run('credits', 'history')
    expect(r.code).toBe(0)
    const rows = readTable(r.stdout, ['ID', 'TIME', 'KIND', 'AMOUNT', 'VERIFICATION', 'NOTE'], ['ID', 'AMOUNT'])
    expect(rows.map((e) => [e.ID, e.KIND, e.AMOUNT, e.NOTE])).toEqual([
      ['3', 'debit', '-1', '-'],
      ['2', 'grant', '5', '-'],
      ['1', 'grant', '1000', 'invoice 42'],
    ])
    expect(rows[0]!.VERIFICATION).toMatch(/^[0-9a-f-]{8,}$/)
    const json = env.json('credits', 'history')
    expect(Object.keys(json)).toEqual(['account', 'entries'])
    expect(json.entries.map((e: any) => Object.keys(e))[0]).toEqual(['id', 'created_at', 'kind', 'amount', 'verification_id', 'note'])
    expect(json.entries.map((e: any) => [e.kind, e.amount, e.note])).toEqual([
      ['debit', -1, null],
      ['grant', 5, null],
      ['grant', 1000, 'invoice 42'],
    ])
    expect(json.entries[0].verification_id).toBe(rows[0]!.VERIFICATION)
    expect(json.entries.reduce((s: number, e: any) => s + e.amount, 0)).toBe(env.json('credits', 'balance').balance)
  })
})

describe('config init', () => {
  const EXAMPLE = readFileSync(join(import.meta.dir, '..', '..', 'otp.config.example.toml'), 'utf8')

  test('writes the commented example to otp.config.toml in the current directory, and says where', async () => {
    env = await cliEnv()
    const dir = join(env.dir, 'fresh')
    mkdirSync(dir)
    const p = Bun.spawnSync(['bun', join(import.meta.dir, '..', '..', 'src', 'main.ts'), 'config', 'init'], { cwd: dir })
    const path = join(dir, 'otp.config.toml')
    expect(p.stderr.toString()).toBe('')
    expect(p.exitCode).toBe(0)
    expect(p.stdout.toString()).toBe(`wrote the example config to ${path}\nEdit it, then check it: otpd config check --config ${path}\n`)
    expect(readFileSync(path, 'utf8')).toBe(EXAMPLE)
  })

  test('writes to --file, and the result is a valid config', async () => {
    env = await cliEnv()
    const path = join(env.dir, 'new.toml')
    const r = env.run('config', 'init', '--file', path)
    expect(r.code).toBe(0)
    expect(r.stdout).toStartWith(`wrote the example config to ${path}\n`)
    expect(readFileSync(path, 'utf8')).toBe(EXAMPLE)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(env.json('config', 'check', '--config', path)).toMatchObject({ ok: true, listen: '127.0.0.1:8080' })
  })

  test('refuses to overwrite an existing file without --force, and overwrites it with --force', async () => {
    env = await cliEnv()
    const path = join(env.dir, 'mine.toml')
    writeFileSync(path, '# mine\n')
    const r = env.run('config', 'init', '--file', path)
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toBe(`otpd: error: ${path} already exists; keeping it (use --force to overwrite it)\n`)
    expect(readFileSync(path, 'utf8')).toBe('# mine\n')
    expect(env.run('config', 'init', '--file', path, '--force').code).toBe(0)
    expect(readFileSync(path, 'utf8')).toBe(EXAMPLE)
  })

  test('a missing directory is a clear error', async () => {
    env = await cliEnv()
    const path = join(env.dir, 'nowhere', 'otp.config.toml')
    const r = env.run('config', 'init', '--file', path)
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(`otpd: error: cannot write ${path}: directory ${join(env.dir, 'nowhere')} does not exist\n`)
    expect(existsSync(join(env.dir, 'nowhere'))).toBe(false)
  })

  test('--file - prints it; --help shows examples', async () => {
    env = await cliEnv()
    expect(env.run('config', 'init', '--file', '-').stdout).toBe(EXAMPLE)
    const help = env.run('config', 'init', '--help')
    expect(help.stdout).toContain('--force')
    expect(help.stdout).toMatch(/Examples:\n {2}\$ otpd config init\n/)
  })
})
