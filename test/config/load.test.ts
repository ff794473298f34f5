import { expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type ConfigError, loadConfig, resolveConfig } from '../../src/app/load-config.ts'
import { configProblems as problems } from '../kit/config.ts'
import { tempDir } from '../kit/cleanup.ts'

function file(text: string): string {
  const d = tempDir('otpd-cfg-')
  const f = join(d, 'otp.config.toml')
  writeFileSync(f, text)
  return f
}

test('no file and no environment gives the documented defaults', () => {
  const { config, source } = loadConfig({ env: {} })
  expect(source).toBe('built-in defaults')
  expect(config.server.listen).toBe('127.0.0.1:8080')
  expect(config.database.path).toBe('./data/otpd.db')
  expect(config.database.synchronous).toBe('FULL')
  expect(config.limits).toEqual({
    key_requests_per_minute: 120,
    recipient_per_minute: 2,
    recipient_per_hour: 15,
    recipient_per_day: 50,
    max_failed_attempts: 5,
    lockout_seconds: 900,
    recipient_failures_per_day: 100,
  })
  expect(config.codes.default_length).toBe(6)
  expect(config.retention.days).toBe(7)
  expect(config.delivery.timeout_ms).toBe(10_000)
})

test('the example config file is valid and equals the defaults (its relative database.path read from its directory)', () => {
  const root = join(import.meta.dir, '..', '..')
  const fromExample = loadConfig({ file: join(root, 'otp.config.example.toml'), env: {} }).config
  const defaults = loadConfig({ env: {} }).config
  expect(fromExample).toEqual({ ...defaults, database: { ...defaults.database, path: join(root, 'data', 'otpd.db') } })
})

test('the file comes from --config, else OTPD_CONFIG', () => {
  const a = file('[server]\nlisten = "127.0.0.1:9001"\n')
  const b = file('[server]\nlisten = "127.0.0.1:9002"\n')
  expect(loadConfig({ env: { OTPD_CONFIG: a } }).config.server.listen).toBe('127.0.0.1:9001')
  expect(loadConfig({ file: b, env: { OTPD_CONFIG: a } }).config.server.listen).toBe('127.0.0.1:9002')
})

test('OTPD_<SECTION>__<KEY> overlays the file, converting numbers', () => {
  const f = file('[limits]\nrecipient_per_minute = 3\nrecipient_per_hour = 20\n')
  const { config } = loadConfig({ file: f, env: { OTPD_LIMITS__RECIPIENT_PER_MINUTE: '7', OTPD_SERVER__LISTEN: '0.0.0.0:8081' } })
  expect(config.limits.recipient_per_minute).toBe(7)
  expect(config.limits.recipient_per_hour).toBe(20)
  expect(config.server.listen).toBe('0.0.0.0:8081')
})

test('environment lists are comma-separated', () => {
  const { config } = loadConfig({ env: { OTPD_PROVIDERS__DEV__TYPE: 'log', OTPD_PROVIDERS__SPARE__TYPE: 'noop', OTPD_CHANNELS__SMS: 'dev, spare' } })
  expect(config.channels.sms).toEqual(['dev', 'spare'])
})

test('every bad key is reported by its path, all at once', () => {
  const f = file(
    '[limits]\nrecipient_per_minute = 0\nmax_failed_attempts = "five"\nbogus = 1\n[codes]\ndefault_length = 11\n[database]\nsynchronous = "OFF"\n[nonsense]\nx = 1\n',
  )
  const p = problems(() => loadConfig({ file: f, env: {} }))
  const text = p.join('\n')
  expect(text).toContain('limits.recipient_per_minute')
  expect(text).toContain('limits.max_failed_attempts')
  expect(text).toContain('limits.bogus is not a known setting')
  expect(text).toContain('codes.default_length')
  expect(p).toContain('database.synchronous must be one of: FULL, NORMAL (got "OFF")')
  expect(p).toContain('limits.recipient_per_minute must be a whole number from 1 to 1000000000 (got 0)')
  expect(text).toContain('nonsense is not a known setting')
})

test('a bad environment value is reported by its key path', () => {
  try {
    loadConfig({ env: { OTPD_LIMITS__LOCKOUT_SECONDS: 'soon' } })
    throw new Error('expected a ConfigError')
  } catch (err) {
    expect((err as ConfigError).problems).toEqual(['limits.lockout_seconds must be a whole number from 1 to 31536000 (got "soon")'])
    expect((err as ConfigError).source).toBe('built-in defaults + environment (OTPD_LIMITS__LOCKOUT_SECONDS)')
  }
})

test('invalid TOML and a missing file are one clear problem each', () => {
  expect(problems(() => loadConfig({ file: file('[server\nlisten='), env: {} }))[0]).toContain('is not valid TOML')
  expect(problems(() => loadConfig({ file: '/nonexistent/otp.toml', env: {} }))[0]).toBe('cannot read config file /nonexistent/otp.toml: ENOENT')
})

test('server.listen must be HOST:PORT', () => {
  expect(problems(() => resolveConfig({ server: { listen: '8080' } }))[0]).toStartWith('server.listen must be HOST:PORT')
  expect(problems(() => resolveConfig({ server: { listen: 'localhost:70000' } }))[0]).toStartWith('server.listen must be HOST:PORT')
  expect(resolveConfig({ server: { listen: '[::1]:8080' } }).server.listen).toBe('[::1]:8080')
})

test('channels must name defined providers, and provider types must exist', () => {
  const p = problems(() => resolveConfig({ channels: { sms: ['x'] }, providers: { y: { type: 'carrier-pigeon' }, z: {} } }))
  expect(p).toContain("channels.sms names provider 'x', which is not defined")
  expect(p).toContain("providers.y.type 'carrier-pigeon' is not one of: smtp, twilio, vonage, whatsapp, webhook, log, noop")
  expect(p).toContain('providers.z.type is missing (one of: smtp, twilio, vonage, whatsapp, webhook, log, noop)')
})

test('a provider type named like a property of every object (constructor, __proto__, toString...) gets the ordinary "not one of" error, also when a channel names it', () => {
  const names = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString']
  for (const name of names) {
    const p = problems(() => resolveConfig({ channels: { sms: ['y'] }, providers: { y: { type: name } } }))
    expect(p).toEqual([`providers.y.type '${name}' is not one of: smtp, twilio, vonage, whatsapp, webhook, log, noop`])
  }
  // From a file, as an operator writes it.
  const f = file('[channels]\nsms = ["y"]\n[providers.y]\ntype = "constructor"\n')
  expect(problems(() => loadConfig({ file: f, env: {} }))).toEqual([
    "providers.y.type 'constructor' is not one of: smtp, twilio, vonage, whatsapp, webhook, log, noop",
  ])
})

test('a short server.secret is rejected without echoing it', () => {
  expect(problems(() => resolveConfig({ server: { secret: 'short-secret-value' } }))).toEqual(['server.secret must be a string of at least 32 characters'])
})

test('server.admin_listen must be HOST:PORT and differ from server.listen', () => {
  expect(resolveConfig({ server: { admin_listen: '127.0.0.1:9090' } }).server.admin_listen).toBe('127.0.0.1:9090')
  expect(resolveConfig({}).server.admin_listen).toBeUndefined() // off by default
  expect(problems(() => resolveConfig({ server: { admin_listen: 'localhost' } }))).toEqual([
    "server.admin_listen must be HOST:PORT such as 127.0.0.1:8080 ('localhost' is not HOST:PORT)",
  ])
  expect(problems(() => resolveConfig({ server: { listen: '127.0.0.1:8080', admin_listen: '127.0.0.1:8080' } }))).toEqual([
    'server.admin_listen must differ from server.listen (the admin listener is a second port)',
  ])
})

test('a short server.metrics_token is rejected without echoing it; it can come from the environment', () => {
  expect(problems(() => resolveConfig({ server: { metrics_token: 'tiny-token-value' } }))).toEqual([
    'server.metrics_token must be a string of at least 32 characters',
  ])
  const token = 'a'.repeat(40)
  expect(loadConfig({ env: { OTPD_SERVER__METRICS_TOKEN: token } }).config.server.metrics_token).toBe(token)
})

test('[server.tls] paths can come from the environment too', () => {
  const p = problems(() => loadConfig({ env: { OTPD_SERVER__TLS__CERT: '/nonexistent/cert.pem' } }))
  expect(p).toEqual(['server.tls.cert and server.tls.key must be set together (only server.tls.cert is set)'])
})
