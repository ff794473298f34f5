/**
 * Two `otpd serve` processes on one database file. Inside one process the
 * event loop already serialises verify, so only separate processes prove
 * the IMMEDIATE transactions: without them these races would double-spend.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { cliEnv, post, startServer, type CliEnv } from '../kit/cli.ts'

// These tests start `otpd` processes; bunfig.toml cannot raise bun's 5 s default per file.
setDefaultTimeout(30_000)

let env: CliEnv

const HIGH_LIMITS = '[limits]\nkey_requests_per_minute = 100000\n[fraud]\nmode = "off"\n'

async function twoServers(): Promise<[string, string]> {
  const servers = [await startServer(env), await startServer(env)]
  return [servers[0]!.url, servers[1]!.url]
}

test('200 verifies of one code across two processes: exactly one succeeds', async () => {
  env = await cliEnv(HIGH_LIMITS)
  const key = env.json('keys', 'create').key
  const [a, b] = await twoServers()
  const sent = await post(a, '/api/v1/send', key, { channel: 'sms', recipient: '+15550100001' })
  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) => post(i % 2 ? a : b, '/api/v1/verify', key, { verification_id: sent.json.verification_id, code: '123456' })),
  )
  expect(results.map((r) => r.status)).toEqual(Array(200).fill(200))
  expect(results.filter((r) => r.json.verified === true)).toHaveLength(1)
  expect(results.filter((r) => r.json.message === 'Code already used')).toHaveLength(199)
})

test('sends across two processes never spend more credits than the balance', async () => {
  env = await cliEnv(HIGH_LIMITS)
  const key = env.json('keys', 'create').key
  env.json('credits', 'add', '50')
  const [a, b] = await twoServers()
  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) => post(i % 2 ? a : b, '/api/v1/send', key, { channel: 'sms', recipient: `+1415555${String(i).padStart(4, '0')}` })),
  )
  const statuses = results.map((r) => r.status)
  expect(statuses.filter((s) => s === 200)).toHaveLength(50)
  expect(statuses.filter((s) => s === 402)).toHaveLength(150)
  expect(env.json('credits', 'balance').balance).toBe(0)
})

test('sends to one recipient across two processes: exactly the per-minute limit gets through', async () => {
  env = await cliEnv(HIGH_LIMITS)
  const key = env.json('keys', 'create').key
  env.json('credits', 'add', '100')
  const [a, b] = await twoServers()
  const results = await Promise.all(
    Array.from({ length: 30 }, (_, i) => post(i % 2 ? a : b, '/api/v1/send', key, { channel: 'sms', recipient: '+14155550199' })),
  )
  expect(results.filter((r) => r.status === 200)).toHaveLength(2)
  expect(results.filter((r) => r.status === 429)).toHaveLength(28)
  expect(env.json('credits', 'balance').balance).toBe(98)
})
