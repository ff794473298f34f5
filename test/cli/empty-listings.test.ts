/**
 * An empty listing says so and names the command that makes the first entry
 * (docs/operating.md#cli), with the filter it was given; `--json` stays [].
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { cliEnv } from '../kit/cli.ts'

setDefaultTimeout(30_000)

const WEBHOOK = 'otpd webhooks add --url https://example.com/otpd-events'

test.each([
  [['keys', 'list'], 'none yet: otpd keys create --name NAME'],
  [['keys', 'list', '--account', 'acme'], "none for account 'acme' yet: otpd keys create --name NAME --account acme"],
  [['webhooks', 'list'], `none yet: ${WEBHOOK}`],
  [['webhooks', 'list', '--account', 'acme'], `none for account 'acme' yet: ${WEBHOOK} --account acme`],
  [['events', 'list'], `none yet: events are recorded as codes are sent and verified through the API; to receive them: ${WEBHOOK}`],
  [['events', 'list', '--status', 'failed'], 'none failed: see every event with otpd events list'],
  [['credits', 'history'], "none for account 'default' yet: otpd credits add AMOUNT"],
  [['credits', 'history', '--account', 'acme'], "none for account 'acme' yet: otpd credits add AMOUNT --account acme"],
] as [string[], string][])('otpd %j with nothing to list: %s', async (args, line) => {
  const env = await cliEnv()
  expect(env.run('accounts', 'create', 'acme').code).toBe(0)
  const r = env.run(...args)
  expect([r.code, r.stdout, r.stderr]).toEqual([0, `${line}\n`, ''])
  const json = env.json(...args)
  expect(Array.isArray(json) ? json : json.entries).toEqual([])
})

test('each hint is a command otpd accepts', async () => {
  const env = await cliEnv()
  expect(env.run('keys', 'create', '--name', 'NAME').code).toBe(0)
  expect(env.run('webhooks', 'add', '--url', 'https://example.com/otpd-events').code).toBe(0)
  expect(env.run('credits', 'add', '5').code).toBe(0)
  expect(env.run('accounts', 'create', 'NAME').code).toBe(0)
  for (const args of [
    ['keys', 'list'],
    ['webhooks', 'list'],
    ['credits', 'history'],
    ['accounts', 'list'],
  ])
    expect(env.run(...args).stdout).not.toStartWith('none')
})
