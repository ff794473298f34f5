/** `server.public_url` (docs/api.md#delivery-receipts): a checked URL, and what it asks of the providers that get receipts. */
import { expect, test } from 'bun:test'
import { loadConfig } from '../../src/app/load-config.ts'
import { configProblems } from '../kit/config.ts'
import { RESTART_ONLY } from '../../src/app/reload.ts'

const problems = (env: Record<string, string>): string[] => configProblems(() => loadConfig({ env, search: [] }))

test('server.public_url must be an http(s) URL without query, fragment or credentials', () => {
  for (const good of ['https://otp.example.com', 'https://otp.example.com/', 'http://10.0.0.5:8080/otp']) {
    expect(problems({ OTPD_SERVER__PUBLIC_URL: good })).toEqual([])
  }
  for (const bad of ['otp.example.com', 'ftp://otp.example.com', 'https://u:p@otp.example.com', 'https://otp.example.com/?x=1', 'https://otp.example.com/#x']) {
    expect(problems({ OTPD_SERVER__PUBLIC_URL: bad })).toEqual([
      `server.public_url must be an http:// or https:// URL with no query, fragment or credentials, such as "https://otp.example.com" (got ${JSON.stringify(bad)})`,
    ])
  }
  expect(loadConfig({ env: { OTPD_SERVER__PUBLIC_URL: 'https://otp.example.com/' }, search: [] }).config.server.public_url).toBe('https://otp.example.com/')
  // Receipt URLs handed to vendors must keep working: a change waits for a restart.
  expect(RESTART_ONLY).toContain('server.public_url')
})

test('with receipts on, a Vonage provider that sends SMS needs the signature secret', () => {
  const base = {
    OTPD_PROVIDERS__V__TYPE: 'vonage',
    OTPD_PROVIDERS__V__API_KEY: 'abcd1234',
    OTPD_PROVIDERS__V__API_SECRET_ENV: 'VONAGE_API_SECRET',
    OTPD_PROVIDERS__V__FROM: 'Acme',
    OTPD_CHANNELS__SMS: 'v',
    VONAGE_API_SECRET: 's',
  }
  expect(problems(base)).toEqual([])
  expect(problems({ ...base, OTPD_SERVER__PUBLIC_URL: 'https://otp.example.com' })).toEqual([
    "providers.v.signature_secret_env is missing: server.public_url turns delivery receipts on, and Vonage signs them with the account's signature secret: name the environment variable holding it, such as VONAGE_SIGNATURE_SECRET",
  ])
  expect(
    problems({
      ...base,
      OTPD_SERVER__PUBLIC_URL: 'https://otp.example.com',
      OTPD_PROVIDERS__V__SIGNATURE_SECRET_ENV: 'VONAGE_SIGNATURE_SECRET',
      VONAGE_SIGNATURE_SECRET: 'x',
    }),
  ).toEqual([])
})
