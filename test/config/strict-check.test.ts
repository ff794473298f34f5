/** A strict config check, config discovery, and the env file (docs/configuration.md). */
import { describe, expect, test } from 'bun:test'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig, resolveConfig } from '../../src/app/load-config.ts'
import { configProblems as problemsOf } from '../kit/config.ts'
import { parseEnvFile } from '../../src/config/env-file.ts'
import { findConfigFile, loadConfig as loadShape } from '../../src/config/load.ts'
import { tempDir } from '../kit/cleanup.ts'

const strictDir = () => tempDir('otpd-strict-')

function fileProblems(toml: string): string[] {
  const f = join(strictDir(), 'otp.config.toml')
  writeFileSync(f, toml)
  return problemsOf(() => loadConfig({ file: f, env: {} }))
}

describe('types are strict', () => {
  test.each([
    ['recipient_per_minute = "2"', 'limits.recipient_per_minute must be a whole number from 1 to 1000000000 (got "2")', '[limits]'],
    ['recipient_per_minute = true', 'limits.recipient_per_minute must be a whole number from 1 to 1000000000 (got true)', '[limits]'],
    ['default_length = true', 'codes.default_length must be a whole number from 4 to 10 (got true)', '[codes]'],
    ['days = "7"', 'retention.days must be a whole number from 1 to 36500 (got "7")', '[retention]'],
    ['listen = 8080', 'server.listen must be a string (got 8080)', '[server]'],
  ])('%s is refused with its key named', (line, problem, section) => {
    expect(fileProblems(`${section}\n${line}\n`)).toEqual([problem])
  })

  test('the environment is strings: a whole number is converted where a number is wanted, nothing else', () => {
    expect(loadConfig({ env: { OTPD_LIMITS__RECIPIENT_PER_MINUTE: '3' } }).config.limits.recipient_per_minute).toBe(3)
    expect(problemsOf(() => loadConfig({ env: { OTPD_LIMITS__RECIPIENT_PER_MINUTE: 'true' } }))).toEqual([
      'limits.recipient_per_minute must be a whole number from 1 to 1000000000 (got "true")',
    ])
  })
})

test('every problem of every section is reported in one run: an error in [limits] does not hide an unknown provider', () => {
  const p = fileProblems('[limits]\nrecipient_per_hour = -1\n[channels]\nsms = ["nowhere"]\n[server]\nlisten = "256.1.1.1:80"\nsecret = "short"\n')
  expect(p).toContain('limits.recipient_per_hour must be a whole number from 1 to 1000000000 (got -1)')
  expect(p).toContain("channels.sms names provider 'nowhere', which is not defined")
  expect(p).toContain("server.listen must be HOST:PORT such as 127.0.0.1:8080 ('256.1.1.1' is not an IPv4 address)")
  expect(p).toContain('server.secret must be a string of at least 32 characters')
  expect(p).toHaveLength(4)
})

test('a TOML syntax error gives the line and column', () => {
  const p = fileProblems('[server]\nlisten = "127.0.0.1:8080"\n\n[limits\nrecipient_per_minute = 2\n')
  expect(p).toHaveLength(1)
  expect(p[0]).toMatch(/is not valid TOML at line 4, column \d+: /)
})

describe('server.listen', () => {
  test.each([
    ['256.1.1.1:80', "'256.1.1.1' is not an IPv4 address"],
    ['127.0.0.1:65536', 'port 65536 is out of range 1-65535'],
    ['[::zz]:8080', "'::zz' is not an IPv6 address"],
    ['bad_host!:8080', "'bad_host!' is not a host name or address"],
    ['127.0.0.1', "'127.0.0.1' is not HOST:PORT"],
  ])('%s is refused', (listen, why) => {
    expect(problemsOf(() => resolveConfig({ server: { listen } }))).toEqual([`server.listen must be HOST:PORT such as 127.0.0.1:8080 (${why})`])
  })

  test.each([['0.0.0.0:443'], ['[::]:8080'], ['localhost:8080'], ['otp.example.com:1']])('%s is accepted', (listen) => {
    expect(resolveConfig({ server: { listen } }).server.listen).toBe(listen)
  })
})

describe('OTPD_ variables that match no setting', () => {
  test('are warned about with the nearest name; settings, OTPD_CONFIG and variables the config names are not', () => {
    const f = join(strictDir(), 'otp.config.toml')
    writeFileSync(
      f,
      '[providers.mail]\ntype = "smtp"\nhost = "smtp.example.com"\nfrom = "otp@example.com"\nusername = "u"\npassword_env = "OTPD_SMTP_PASSWORD"\n[channels]\nemail = ["mail"]\n',
    )
    const loaded = loadConfig({
      env: { OTPD_CONFIG: f, OTPD_SERVER_LISTEN: '0.0.0.0:80', OTPD_LOGGING__LEVEL: 'debug', OTPD_SMTP_PASSWORD: 'p', OTPD_ZZZZZZZZZZZZZZZZZZZZZZZZZZ: '1' },
    })
    expect(loaded.warnings).toEqual([
      'environment variable OTPD_SERVER_LISTEN matches no setting and is ignored (did you mean OTPD_SERVER__LISTEN?)',
      'environment variable OTPD_ZZZZZZZZZZZZZZZZZZZZZZZZZZ matches no setting and is ignored',
    ])
  })
})

describe('provider checks belong to the commands that deliver', () => {
  const toml =
    '[providers.mail]\ntype = "smtp"\nhost = "smtp.example.com"\nfrom = "otp@example.com"\nusername = "u"\npassword_env = "OTPD_SMTP_PASSWORD"\n[channels]\nemail = ["mail"]\n'
  test('the shape loader accepts a config whose provider secret is missing; the delivering loader names it', () => {
    const f = join(strictDir(), 'otp.config.toml')
    writeFileSync(f, toml)
    expect(loadShape({ file: f, env: {} }).config.channels.email).toEqual(['mail'])
    expect(problemsOf(() => loadConfig({ file: f, env: {} }))).toEqual(['providers.mail.password_env names OTPD_SMTP_PASSWORD, which is not set'])
  })

  test('--env-file adds the variables systemd would (they win over the environment)', () => {
    const d = strictDir()
    writeFileSync(join(d, 'otp.config.toml'), toml)
    writeFileSync(join(d, 'otpd.env'), '# secrets\nOTPD_SMTP_PASSWORD="s3cret"\n')
    const loaded = loadConfig({ file: join(d, 'otp.config.toml'), env: { OTPD_SMTP_PASSWORD: '' }, envFile: join(d, 'otpd.env') })
    expect(loaded.env.OTPD_SMTP_PASSWORD).toBe('s3cret')
    expect(() => loadConfig({ file: join(d, 'otp.config.toml'), env: {}, envFile: join(d, 'missing.env') })).toThrow(
      `cannot read env file ${join(d, 'missing.env')}: ENOENT`,
    )
  })
})

test('env files are read like systemd EnvironmentFile', () => {
  expect(parseEnvFile('# c\n; c\n\nA=1\nB = two words \nC="q \\"x\\" \\\\"\nD=\'single $X\'\nE=\n')).toEqual({
    A: '1',
    B: 'two words',
    C: 'q "x" \\',
    D: 'single $X',
    E: '',
  })
  expect(() => parseEnvFile('just text\n', 'f.env')).toThrow('f.env line 1 is not KEY=value')
})

describe('config discovery', () => {
  test('--config, then OTPD_CONFIG, then ./otp.config.toml, then /etc/otpd/otp.config.toml, else built-in defaults', () => {
    const d = strictDir()
    const local = join(d, 'cwd', 'otp.config.toml')
    const etc = join(d, 'etc', 'otpd', 'otp.config.toml')
    mkdirSync(join(d, 'cwd'))
    mkdirSync(join(d, 'etc', 'otpd'), { recursive: true })
    const search = [local, etc]
    expect(findConfigFile({ env: {}, search })).toBeNull()
    writeFileSync(etc, '')
    expect(findConfigFile({ env: {}, search })).toBe(etc)
    writeFileSync(local, '')
    expect(findConfigFile({ env: {}, search })).toBe(local)
    expect(findConfigFile({ env: { OTPD_CONFIG: '/x/env.toml' }, search })).toBe('/x/env.toml')
    expect(findConfigFile({ file: '/x/flag.toml', env: { OTPD_CONFIG: '/x/env.toml' }, search })).toBe('/x/flag.toml')
    writeFileSync(etc, '[server]\nlisten = "127.0.0.1:9999"\n')
    rmSync(local)
    const loaded = loadConfig({ env: {}, search })
    expect([loaded.file, loaded.source, loaded.config.server.listen]).toEqual([etc, etc, '127.0.0.1:9999'])
    expect(loadConfig({ env: {}, search: [] }).source).toBe('built-in defaults')
  })
})

describe('every problem in one run', () => {
  test('provider and country problems are reported beside schema problems of the same sections', () => {
    const p = fileProblems(
      '[channels]\nsms = ["p", 3]\nemail = ["p"]\n[providers.p]\ntype = "bogus"\n[providers.r]\nx = 1\n[providers.s]\ntype = 3\n' +
        '[fraud]\nmode = "x"\nallowed_countries = ["UK", "gb"]\n',
    )
    expect(p.sort()).toEqual(
      [
        'channels.sms.1 must be a string of at least 1 characters (got 3)',
        'fraud.mode must be one of: enforce, monitor, off (got "x")',
        'fraud.allowed_countries.1 must be a country code in capitals such as GB or US, or \'*\' (got "gb")',
        "fraud.allowed_countries has 'UK', which is no country code of the phone metadata (ISO 3166-1 alpha-2, for example GB, US; ZZ for numbers of no known country)",
        "providers.p.type 'bogus' is not one of: smtp, twilio, vonage, whatsapp, webhook, log, noop",
        'providers.r.type is missing (one of: smtp, twilio, vonage, whatsapp, webhook, log, noop)',
        "providers.s.type '3' is not one of: smtp, twilio, vonage, whatsapp, webhook, log, noop",
      ].sort(),
    )
  })

  test('a provider that is not a table is named, and the tables beside it are still checked', () => {
    expect(fileProblems('[providers]\na = 3\n[providers.b]\ntype = "nope"\n').sort()).toEqual([
      'providers.a must be a table (got 3)',
      "providers.b.type 'nope' is not one of: smtp, twilio, vonage, whatsapp, webhook, log, noop",
    ])
  })
})
