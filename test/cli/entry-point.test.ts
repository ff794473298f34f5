/**
 * The CLI through the real entry point (docs/operating.md): commands need only what they use,
 * config discovery, no database made by a command that only reads, credits
 * deduct, and the small consistencies (help, error prefix).
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { cliEnv, type CliRun } from '../kit/cli.ts'
import { testSqliteOnly } from '../kit/harness.ts'

// These tests start `otpd` processes; bunfig.toml cannot raise bun's 5 s default per file.
setDefaultTimeout(30_000)

const MAIN = join(import.meta.dir, '..', '..', 'src', 'main.ts')

/** Runs otpd with exactly this environment (plus PATH), in `cwd`: no OTPD_CONFIG, no provider secrets unless given. */
function runBare(cwd: string, env: Record<string, string>, args: string[], stdin?: string): CliRun {
  const p = Bun.spawnSync(['bun', MAIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/', ...env },
    stdin: stdin === undefined ? 'ignore' : Buffer.from(stdin),
  })
  return { code: p.exitCode ?? -1, stdout: p.stdout.toString(), stderr: p.stderr.toString() }
}

const SMTP =
  '[providers.mail]\ntype = "smtp"\nhost = "smtp.example.com"\nfrom = "otp@example.com"\nusername = "otpd"\npassword_env = "OTPD_SMTP_PASSWORD"\n[channels]\nemail = ["mail"]\n'

describe('a restricted environment without provider secrets', () => {
  test('key, credit, account and listing commands work; serve, send-test and config check name the missing variable', async () => {
    const env = await cliEnv(SMTP)
    const e = { OTPD_CONFIG: env.configFile }
    const create = runBare(env.dir, e, ['keys', 'create', '--name', 'backend', '--json'])
    expect([create.code, create.stderr]).toEqual([0, ''])
    expect(JSON.parse(create.stdout).name).toBe('backend')
    for (const args of [
      ['keys', 'list'],
      ['credits', 'add', '10'],
      ['credits', 'balance'],
      ['credits', 'history'],
      ['accounts', 'create', 'acme'],
      ['accounts', 'list'],
    ]) {
      const r = runBare(env.dir, e, args)
      expect([args.join(' '), r.code, r.stderr]).toEqual([args.join(' '), 0, ''])
    }
    const check = runBare(env.dir, e, ['config', 'check'])
    expect(check.code).toBe(1)
    expect(check.stderr).toContain('providers.mail.password_env names OTPD_SMTP_PASSWORD, which is not set')
    expect(check.stderr).toContain('missing from this environment: OTPD_SMTP_PASSWORD')
    const sendTest = runBare(env.dir, e, ['send-test', '--channel', 'email', '--to', 'ops@example.com'])
    expect(sendTest.code).toBe(1)
    expect(sendTest.stderr).toContain('OTPD_SMTP_PASSWORD, which is not set')
    const serve = runBare(env.dir, e, ['serve', '--listen', '127.0.0.1:0'])
    expect(serve.code).toBe(1)
    expect(serve.stderr).toContain('OTPD_SMTP_PASSWORD, which is not set')
  })

  test('--env-file FILE (and - for stdin) supplies them, as systemd EnvironmentFile does', async () => {
    const env = await cliEnv(SMTP)
    const file = join(env.dir, 'otpd.env')
    writeFileSync(file, '# read by systemd\nOTPD_SMTP_PASSWORD=s3cret\n')
    const e = { OTPD_CONFIG: env.configFile }
    const r = runBare(env.dir, e, ['config', 'check', '--env-file', file])
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(r.stdout).toStartWith(`configuration OK (${env.configFile})\n`)
    expect(runBare(env.dir, e, ['config', 'check', '--env-file', '-'], 'OTPD_SMTP_PASSWORD=s3cret\n').code).toBe(0)
    const missing = runBare(env.dir, e, ['keys', 'list', '--env-file', join(env.dir, 'nope.env')])
    expect([missing.code, missing.stderr]).toEqual([1, `otpd: error: cannot read env file ${join(env.dir, 'nope.env')}: ENOENT\n`])
  })
})

describe('config discovery through the binary', () => {
  test('./otp.config.toml is used when neither --config nor OTPD_CONFIG is given, and named first', async () => {
    const env = await cliEnv('[server]\nlisten = "127.0.0.1:9123"\n')
    const r = runBare(env.dir, {}, ['config', 'check'])
    expect(r.code).toBe(0)
    expect(r.stdout.split('\n')[0]).toBe(`configuration OK (${env.configFile})`)
    expect(r.stdout).toContain('127.0.0.1:9123')
  })

  test('OTPD_CONFIG wins over ./otp.config.toml, and --config over both', async () => {
    const env = await cliEnv('[server]\nlisten = "127.0.0.1:9123"\n')
    const other = join(env.dir, 'other.toml')
    const third = join(env.dir, 'third.toml')
    writeFileSync(other, '[server]\nlisten = "127.0.0.1:9124"\n')
    writeFileSync(third, '[server]\nlisten = "127.0.0.1:9125"\n')
    expect(JSON.parse(runBare(env.dir, { OTPD_CONFIG: other }, ['config', 'check', '--json']).stdout)).toMatchObject({
      source: other,
      listen: '127.0.0.1:9124',
    })
    expect(JSON.parse(runBare(env.dir, { OTPD_CONFIG: other }, ['config', 'check', '--json', '--config', third]).stdout)).toMatchObject({
      source: third,
      listen: '127.0.0.1:9125',
    })
  })

  testSqliteOnly('commands that only read never create a database', async () => {
    const env = await cliEnv('', {}, { noDatabase: true })
    const empty = join(env.dir, 'empty')
    mkdirSync(empty)
    for (const args of [
      ['credits', 'balance'],
      ['credits', 'history'],
      ['keys', 'list'],
      ['accounts', 'list'],
    ]) {
      const r = runBare(env.dir, { OTPD_CONFIG: env.configFile }, args)
      expect([args.join(' '), r.code, r.stdout, r.stderr]).toEqual([
        args.join(' '),
        1,
        '',
        `otpd: error: no database at ${join(env.dir, 'otpd.db')} (database.path from ${env.configFile}): start otpd serve or pass --config\n`,
      ])
    }
    // In a directory with no config: built-in defaults, ./data/otpd.db, which is not made either.
    const r = runBare(empty, {}, ['credits', 'balance'])
    expect(r.stderr).toBe(
      `otpd: error: no database at ${join(empty, 'data', 'otpd.db')} (database.path from built-in defaults): start otpd serve or pass --config\n`,
    )
    expect(existsSync(join(env.dir, 'otpd.db'))).toBe(false)
    expect(existsSync(join(empty, 'data'))).toBe(false)
  })
})

describe('config check through the binary', () => {
  test('each loose case is refused with its key, all in one run; a mistyped OTPD_ variable is a warning with the nearest name', async () => {
    const env = await cliEnv(
      '[server]\nlisten = "256.1.1.1:80"\n[limits]\nrecipient_per_minute = "2"\nrecipient_per_hour = true\n[codes]\ndefault_length = true\n[channels]\nsms = ["nowhere"]\n',
    )
    const r = env.run('config', 'check')
    expect(r.code).toBe(1)
    expect(r.stderr.split('\n').slice(1, 6).sort()).toEqual([
      "  - channels.sms names provider 'nowhere', which is not defined",
      '  - codes.default_length must be a whole number from 4 to 10 (got true)',
      '  - limits.recipient_per_hour must be a whole number from 1 to 1000000000 (got true)',
      '  - limits.recipient_per_minute must be a whole number from 1 to 1000000000 (got "2")',
      "  - server.listen must be HOST:PORT such as 127.0.0.1:8080 ('256.1.1.1' is not an IPv4 address)",
    ])
    const good = await cliEnv()
    const w = runBare(good.dir, { OTPD_CONFIG: good.configFile, OTPD_SERVER_LISTEN: '0.0.0.0:80' }, ['config', 'check'])
    expect(w.code).toBe(0)
    expect(w.stdout).toContain('warning: environment variable OTPD_SERVER_LISTEN matches no setting and is ignored (did you mean OTPD_SERVER__LISTEN?)\n')
    writeFileSync(good.configFile, '[server]\nlisten = "127.0.0.1:8080"\n\n[limits\n')
    expect(good.run('config', 'check').stderr).toMatch(/is not valid TOML at line 4, column \d+/)
  })
})

describe('credits deduct', () => {
  test('a debit with a note that never takes the balance below zero', async () => {
    const env = await cliEnv()
    env.run('credits', 'add', '10')
    expect(env.json('credits', 'deduct', '3', '--note', 'double grant')).toEqual({ account: 'default', balance: 7 })
    expect(env.run('credits', 'deduct', '2').stdout).toBe("deducted 2 credits from 'default'; balance is now 5\n")
    const over = env.run('credits', 'deduct', '6')
    expect([over.code, over.stderr]).toEqual([1, "otpd: error: cannot deduct 6 credits: account 'default' has only 5\n"])
    expect(env.json('credits', 'balance').balance).toBe(5)
    const h = env.json('credits', 'history')
    expect(h.entries.map((e: any) => [e.kind, e.amount, e.note])).toEqual([
      ['debit', -2, null],
      ['debit', -3, 'double grant'],
      ['grant', 10, null],
    ])
  })

  test.each([
    ['deduct', '0', "amount must be a whole number from 1 to 1000000000, got '0'"],
    ['deduct', '1.5', "amount must be a whole number from 1 to 1000000000, got '1.5'"],
    ['deduct', '-5', "amount must be a whole number from 1 to 1000000000, got '-5'; to add credits use: otpd credits add 5"],
    ['add', '-5', "amount must be a whole number from 1 to 1000000000, got '-5'; to take credits away use: otpd credits deduct 5"],
  ])('credits %s -- %s says what is allowed', async (verb, amount, message) => {
    const env = await cliEnv()
    const r = env.run('credits', verb, '--', amount)
    expect([r.code, r.stderr]).toEqual([1, `otpd: error: ${message}\n`])
  })
})

describe('small consistencies', () => {
  test('help points to the installed README and names every page of docs/; commander errors carry the otpd: prefix', async () => {
    const env = await cliEnv()
    const help = env.run('--help').stdout
    expect(help).toContain('Docs: /usr/share/doc/otpd/README.md, and by topic in /usr/share/doc/otpd/docs/')
    // The pages it names are exactly those scripts/install.sh installs there.
    const named = [...help.matchAll(/^ {2}([a-z-]+\.md) /gm)].map((m) => m[1]).sort()
    expect(named).toEqual(
      readdirSync(join(dirname(MAIN), '..', 'docs'))
        .filter((f) => f.endsWith('.md'))
        .sort(),
    )
    expect(env.run('credits', 'add', '1', '--bogus').stderr).toStartWith("otpd: error: unknown option '--bogus'")
    expect(env.run('nonsense').stderr).toStartWith("otpd: error: unknown command 'nonsense'")
    expect(env.run('keys', 'list', '--help').stdout).toContain('--env-file <file>')
  })
})
