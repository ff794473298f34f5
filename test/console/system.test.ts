/**
 * The console's system page (docs/console.md#system): version, engine,
 * readiness, providers, and the effective configuration with every secret
 * masked.
 */
import { expect, test } from 'bun:test'
import pkg from '../../package.json' with { type: 'json' }
import { maskSecrets, maskUrlPassword } from '../../src/console/system.ts'
import { harnessPerTest } from '../kit/harness.ts'
import { consoleOf } from '../kit/console.ts'

const start = harnessPerTest()
const METRICS_TOKEN = 'metrics-token-for-the-console-test-0123456789'

test('system: version, engine, readiness and the configuration, with no secret in the answer', async () => {
  const h = await start({ config: { server: { metrics_token: METRICS_TOKEN } } })
  const r = await consoleOf(h).get('/console/api/system', { rollup: false })
  expect(r.status).toBe(200)
  expect(r.json.version).toBe(pkg.version)
  expect(r.json.engine).toBe(h.server.engine.name)
  expect(r.json.ready).toBe(true)
  expect(r.json.checks).toEqual({ database: 'ok', migrations: 'ok', delivery: 'ok' })
  expect(r.json.providers.sms.length).toBeGreaterThan(0)
  expect(r.json.config.server.metrics_token).toBe('********')
  expect(r.json.config.retention).toEqual(h.server.config.retention)
  const text = JSON.stringify(r.json)
  expect(text).not.toContain(METRICS_TOKEN)
  if (h.server.config.server.secret) expect(text).not.toContain(h.server.config.server.secret)
  if (h.server.engine.name === 'sqlite') expect(r.json.database_bytes).toBeGreaterThan(0)
})

test('masking: secret-named values and URL passwords are masked; where a secret is read from is not', () => {
  expect(
    maskSecrets({
      server: { secret: 'x'.repeat(40), secret_env: 'OTPD_SECRET', metrics_token: 't'.repeat(40) },
      database: { url: 'postgres://otpd:hunter2-long@db:5432/otpd', password_env: 'PGPW' },
      providers: { tw: { type: 'twilio', account_sid: 'AC1', auth_token: 'abc', api_key: 'k', from: 'OTPD' } },
      limits: { key_requests_per_minute: 120 },
    }),
  ).toEqual({
    server: { secret: '********', secret_env: 'OTPD_SECRET', metrics_token: '********' },
    database: { url: 'postgres://otpd:********@db:5432/otpd', password_env: 'PGPW' },
    providers: { tw: { type: 'twilio', account_sid: 'AC1', auth_token: '********', api_key: '********', from: 'OTPD' } },
    limits: { key_requests_per_minute: 120 },
  })
  expect(maskUrlPassword('https://example.com/a:b@c')).toBe('https://example.com/a:b@c')
})
