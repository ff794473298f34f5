/**
 * What `otpd fraud status` reports (docs/api.md#fraud-guard): approvals and
 * conversion by country over the last 24 h only; through the CLI, the table
 * (with --account), approvals in --json, and `otpd fraud unblock` of a blocked
 * prefix.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { ManualClock } from '../../src/lib/clock.ts'
import { cliEnv } from '../kit/cli.ts'
import { approve, guardedPerTest, us, uz } from '../kit/fraud.ts'
import { DAY, harnessPerTest, HOUR } from '../kit/harness.ts'

// The CLI test runs otpd's CLI as processes, several seconds' worth on PostgreSQL on a slow machine.
setDefaultTimeout(30_000)

const start = harnessPerTest()
const signedIn = guardedPerTest()

test('status counts approvals and conversion by country over the last 24 h only', async () => {
  const h = await signedIn()
  await approve(h, us(1))
  await approve(h, us(2))
  expect((await h.send({ channel: 'sms', recipient: us(3) })).status).toBe(200)
  expect((await h.send({ channel: 'sms', recipient: uz(1) })).status).toBe(200)
  h.clock.advance(HOUR)
  expect((await h.server.fraud.status()).countries).toEqual([
    { account: 'default', country: 'US', sends: 3, approved: 2, conversion: 2 / 3 },
    { account: 'default', country: 'UZ', sends: 1, approved: 0, conversion: 0 },
  ])
  h.clock.advance(DAY - HOUR)
  expect((await h.server.fraud.status()).countries).toEqual([])
})

test('the CLI: status as a table with --account, approvals in --json, and unblock of a blocked prefix says so', async () => {
  const env = await cliEnv()
  env.run('accounts', 'create', 'acme')
  // The traffic comes from a server on the same database file, on a clock at the real time (the CLI's).
  const h = await start({
    dir: env.dir,
    databaseUrl: env.databaseUrl,
    clock: new ManualClock(Date.now()),
    credits: 100,
    config: { fraud: { mode: 'enforce', min_sends: 2, conversion_grace_seconds: 0 } },
  })
  await approve(h, us(1))
  expect((await h.send({ channel: 'sms', recipient: uz(1) })).status).toBe(200)
  expect((await h.send({ channel: 'sms', recipient: uz(2) })).status).toBe(200)
  expect((await h.send({ channel: 'sms', recipient: uz(3) })).status).toBe(429)
  h.close()

  expect(env.json('fraud', 'status').countries).toEqual([
    { account: 'default', country: 'UZ', sends: 2, approved: 0, conversion: 0 },
    { account: 'default', country: 'US', sends: 1, approved: 1, conversion: 1 },
  ])
  const acme = env.run('fraud', 'status', '--account', 'acme')
  expect(acme.code).toBe(0)
  expect(acme.stdout).toMatch(
    /^mode: enforce \(config \[fraud\] mode\)\n\nAccounts:\nACCOUNT +COUNTRIES +DAILY CREDIT LIMIT +TEST RECIPIENTS\nacme +\* +none +on\n\nActive blocks:\n {2}none\n\nSends by country, last 24 h:\n {2}none\n$/,
  )
  const mine = env.run('fraud', 'status', '--account', 'default')
  expect(mine.stdout).toMatch(/\ndefault +conversion +UZ +0 +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\ndefault +conversion +\+99890123 +0 /)
  expect(mine.stdout).toMatch(/\ndefault +US +1 +1 +100\.0%\n/)
  expect(mine.stdout).not.toContain('acme')
  const lifted = env.run('fraud', 'unblock', '+99890123')
  expect(lifted.code).toBe(0)
  expect(lifted.stdout).toBe("unblocked prefix +99890123 of account 'default'; its escalation is reset and its conversion counts from now\n")
  expect(env.json('fraud', 'status').blocks.map((b: { scope: string }) => b.scope)).toEqual(['UZ'])
  const none = env.run('fraud', 'unblock', '+99890123')
  expect(none.code).toBe(0)
  expect(none.stdout).toBe("prefix +99890123 of account 'default' was not blocked; its escalation is reset and its conversion counts from now\n")
})
