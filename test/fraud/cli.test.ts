/**
 * The fraud guard through real `otpd` processes (docs/fraud-guard.md):
 * exact counters across two servers on one database, settings from the CLI
 * reaching a running server, and `otpd fraud status|unblock` and
 * `otpd accounts set` as an operator runs them.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { cliEnv, post, startServer } from '../kit/cli.ts'
import { PUMPING, uz } from '../kit/fraud.ts'

// These tests start `otpd` processes; bunfig.toml cannot raise bun's 5 s default per file.
setDefaultTimeout(30_000)

const ROOMY = '[limits]\nkey_requests_per_minute = 100000\nrecipient_per_minute = 1000\n'

test('100 concurrent sends to a new country across two server processes: exactly new_country_per_hour (10) are accepted', async () => {
  const env = await cliEnv(ROOMY)
  const key = env.json('keys', 'create').key
  env.json('credits', 'add', '1000')
  const [a, b] = [await startServer(env), await startServer(env)]
  const results = await Promise.all(
    Array.from({ length: 100 }, (_, i) => post(i % 2 ? a.url : b.url, '/api/v1/send', key, { channel: 'sms', recipient: uz(i) })),
  )
  const ok = results.filter((r) => r.status === 200)
  expect(ok).toHaveLength(10)
  const refused = results.filter((r) => r.status === 429)
  expect(refused).toHaveLength(90)
  for (const r of refused) {
    expect(r.json.error).toBe(PUMPING(r.json.retry_after))
    expect(r.json.retry_after).toBeGreaterThan(3500)
  }
  // Only the accepted sends were charged.
  expect(env.json('credits', 'balance').balance).toBe(990)
  const status = env.json('fraud', 'status')
  expect(status.mode).toBe('enforce')
  expect(status.countries).toEqual([{ account: 'default', country: 'UZ', sends: 10, approved: 0, conversion: 0 }])
})

test('account settings changed from the CLI apply to the next send of a running server (no wait)', async () => {
  const env = await cliEnv(ROOMY)
  const key = env.json('keys', 'create').key
  env.json('credits', 'add', '100')
  const s = await startServer(env)
  const send = (body: Record<string, unknown>) => post(s.url, '/api/v1/send', key, body)
  expect((await send({ channel: 'sms', recipient: uz(1) })).status).toBe(200)

  expect((await env.runAsync('accounts', 'set', 'default', '--countries', 'us,CA')).stdout).toBe(
    "account 'default' may send sms, voice and whatsapp to US, CA\n",
  )
  const refused = await send({ channel: 'sms', recipient: uz(2) })
  expect(refused.status).toBe(403)
  expect(refused.json.error).toBe('Sending to this destination country is not allowed: UZ')
  await env.runAsync('accounts', 'set', 'default', '--countries', '*')
  expect((await send({ channel: 'sms', recipient: uz(2) })).status).toBe(200)

  // Test recipients off: charged (and delivered through the provider) like any other.
  expect((await send({ channel: 'sms', recipient: '+15550100001' })).status).toBe(200)
  expect(env.json('credits', 'balance').balance).toBe(98)
  expect((await env.runAsync('accounts', 'set', 'default', '--test-recipients', 'off')).stdout).toBe(
    "account 'default' treats the test recipients like any other recipient (charged and delivered)\n",
  )
  expect((await send({ channel: 'sms', recipient: '+15550100001' })).status).toBe(200)
  expect(env.json('credits', 'balance').balance).toBe(97)
  await env.runAsync('accounts', 'set', 'default', '--test-recipients', 'on')

  // The daily cap: 3 debits so far in 24 h.
  expect(env.json('accounts', 'set', 'default', '--daily-credit-limit', '3')).toEqual({
    name: 'default',
    countries: ['*'],
    daily_credit_limit: 3,
    test_recipients: true,
  })
  const capped = await send({ channel: 'email', recipient: 'ann@example.com' })
  expect(capped.status).toBe(429)
  expect(capped.json.error).toMatch(/^Daily credit limit of 3 reached for this account\. Please try again in [0-9]+ seconds\.$/)
  expect((await env.runAsync('accounts', 'set', 'default', '--daily-credit-limit', 'none')).stdout).toBe("account 'default' has no daily credit limit\n")
  expect((await send({ channel: 'email', recipient: 'ann@example.com' })).status).toBe(200)
})

test('fraud status shows blocks and conversion by country; fraud unblock lifts a block (exit 0 also when none)', async () => {
  const env = await cliEnv(`${ROOMY}[fraud]\nconversion_grace_seconds = 0\nmin_sends = 2\nnew_country_per_hour = 100\n`)
  const key = env.json('keys', 'create').key
  env.json('credits', 'add', '100')
  await env.runAsync('accounts', 'create', 'acme')
  const s = await startServer(env)
  const send = (i: number) => post(s.url, '/api/v1/send', key, { channel: 'sms', recipient: uz(i) })
  expect((await send(1)).status).toBe(200)
  expect((await send(2)).status).toBe(200)
  const blocked = await send(3) // 2 sends, none approved: both scopes blocked for 15 min
  expect(blocked.status).toBe(429)
  expect(blocked.json.retry_after).toBe(900)

  const json = env.json('fraud', 'status')
  expect(json.blocks.map((b: any) => [b.account, b.rule, b.scope_kind, b.scope, b.level])).toEqual([
    ['default', 'conversion', 'country', 'UZ', 0],
    ['default', 'conversion', 'prefix', '+99890123', 0],
  ])
  expect(Date.parse(json.blocks[0].ends_at) - Date.parse(json.blocks[0].started_at)).toBe(900_000)
  expect(json.countries).toEqual([{ account: 'default', country: 'UZ', sends: 2, approved: 0, conversion: 0 }])
  expect(env.json('fraud', 'status', '--account', 'acme')).toEqual({
    mode: 'enforce',
    accounts: [{ account: 'acme', countries: ['*'], daily_credit_limit: null, test_recipients: true }],
    blocks: [],
    countries: [],
  })

  const table = env.run('fraud', 'status')
  expect(table.code).toBe(0)
  expect(table.stdout).toContain('mode: enforce')
  expect(table.stdout).toMatch(/ACCOUNT +COUNTRIES +DAILY CREDIT LIMIT +TEST RECIPIENTS\ndefault +\* +none +on\nacme +\* +none +on\n/)
  expect(table.stdout).toMatch(
    /ACCOUNT +RULE +SCOPE +LEVEL +ENDS\ndefault +conversion +UZ +0 +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\ndefault +conversion +\+99890123 +0 /,
  )
  expect(table.stdout).toMatch(/ACCOUNT +COUNTRY +SENDS +APPROVED +CONVERSION\ndefault +UZ +2 +0 +0\.0%\n/)

  const lifted = env.run('fraud', 'unblock', 'UZ')
  expect(lifted.code).toBe(0)
  expect(lifted.stdout).toBe("unblocked country UZ of account 'default'; its escalation is reset and its conversion counts from now\n")
  expect(env.run('fraud', 'unblock', '+99890123').code).toBe(0)
  const again = env.run('fraud', 'unblock', 'UZ')
  expect(again.code).toBe(0)
  expect(again.stdout).toBe("country UZ of account 'default' was not blocked; its escalation is reset and its conversion counts from now\n")
  expect(env.json('fraud', 'unblock', '+99890123', '--account', 'acme')).toEqual({
    account: 'acme',
    scope_kind: 'prefix',
    scope: '+99890123',
    was_blocked: false,
  })
  expect(env.json('fraud', 'status').blocks).toEqual([])
  // The running server sees the unblock at once, and the sends before it no longer count.
  expect((await send(4)).status).toBe(200)

  const bad = env.run('fraud', 'unblock', 'Uzbekistan')
  expect(bad.code).toBe(1)
  expect(bad.stderr).toBe("otpd: error: 'Uzbekistan' is not a scope: give a country code (UZ) or a prefix (+99890123) as otpd fraud status shows them\n")
  expect(env.run('fraud', 'unblock', 'UZ', '--account', 'nobody').stderr).toBe(
    "otpd: error: account 'nobody' does not exist (create it with: otpd accounts create nobody)\n",
  )
})

test('accounts set: each option, --json, and the operator mistakes', async () => {
  const env = await cliEnv()
  expect(env.json('accounts', 'set', 'default', '--countries', 'uz,us,UZ')).toEqual({
    name: 'default',
    countries: ['UZ', 'US'],
    daily_credit_limit: null,
    test_recipients: true,
  })
  expect(env.json('accounts', 'set', 'default', '--countries', 'default', '--test-recipients', 'off', '--code-length', '8')).toEqual({
    name: 'default',
    code_length: 8,
    countries: null,
    daily_credit_limit: null,
    test_recipients: false,
  })
  expect(env.run('accounts', 'set', 'default', '--countries', '*').stdout).toBe("account 'default' may send sms, voice and whatsapp to every country\n")
  expect(env.run('accounts', 'set', 'default', '--countries', 'default').stdout).toBe(
    "account 'default' may send sms, voice and whatsapp to the config's fraud.allowed_countries (whatsapp: fraud.whatsapp_allowed_countries, when set)\n",
  )
  expect(env.run('accounts', 'set', 'default', '--daily-credit-limit', '500').stdout).toBe("account 'default' may spend at most 500 credits in any 24 h\n")
  expect(env.run('accounts', 'set', 'default', '--test-recipients', 'on').stdout).toBe(
    "account 'default' answers the test recipients without delivering or charging\n",
  )
  const cases: [string[], string][] = [
    [[], 'otpd: error: nothing to change: give --code-length, --countries, --daily-credit-limit, --test-recipients, --locale, --otp-domain or --custom-text\n'],
    [
      ['--countries', 'XQ'],
      "otpd: error: unknown country code XQ: use ISO 3166-1 alpha-2 codes (US, GB, ...), ZZ for numbers of no known country, or '*' for all\n",
    ],
    [
      ['--countries', 'USA'],
      "otpd: error: option '--countries <list>' argument 'USA' is invalid. --countries takes country codes separated by commas (US,CA), '*' or 'default', got 'USA'\n",
    ],
    [
      ['--daily-credit-limit', '0'],
      "otpd: error: option '--daily-credit-limit <n>' argument '0' is invalid. --daily-credit-limit must be a whole number of at least 1 or 'none', got '0'\n",
    ],
    [
      ['--test-recipients', 'maybe'],
      "otpd: error: option '--test-recipients <on|off>' argument 'maybe' is invalid. --test-recipients must be on or off, got 'maybe'\n",
    ],
  ]
  for (const [args, stderr] of cases) {
    const r = env.run('accounts', 'set', 'default', ...args)
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(stderr)
  }
})
