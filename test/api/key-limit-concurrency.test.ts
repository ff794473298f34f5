/**
 * The per-key limit is decided inside each operation's transaction (or a
 * small one for requests that end before their operation), so it stays exact
 * when many requests arrive together, in one process or across two `otpd
 * serve` processes on one database file. scripts/proofs/concurrency.ts runs
 * these figures against the compiled binary.
 */
import { expect, test } from 'bun:test'
import { cliEnv, post, startServer } from '../kit/cli.ts'
import { harnessPerTest, TEST } from '../kit/harness.ts'

const start = harnessPerTest()

test('one process: of 60 simultaneous requests of every kind, exactly the limit are admitted', async () => {
  const h = await start({ config: { limits: { key_requests_per_minute: 25 } } })
  const sent = await h.send({ channel: 'sms', recipient: TEST.PHONE_FAIL })
  const kinds = [
    () => h!.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS }),
    () => h!.verify({ verification_id: sent.json.verification_id, code: '000000' }),
    () => h!.verify({}),
    () => h!.call('/api/v1/send', undefined, { raw: '{' }),
  ]
  const results = await Promise.all(Array.from({ length: 60 }, (_, i) => kinds[i % kinds.length]!()))
  // Refused by the key's limit; a verify admitted after the code's lockout answers 429 too, with its own message.
  const keyLimited = results.filter(
    (r) => r.status === 429 && r.json.error === 'Rate limit exceeded: Maximum 25 requests per minute. Please try again in 60 seconds.',
  )
  expect(results.length - keyLimited.length).toBe(24) // 25 minus the send above
  expect(keyLimited).toHaveLength(36)
  expect(results.filter((r) => r.status >= 500)).toEqual([])
})

test('two processes on one database: exactly the limit are admitted', async () => {
  const env = await cliEnv('[limits]\nkey_requests_per_minute = 40\n')
  const key = env.json('keys', 'create').key
  const servers = [await startServer(env), await startServer(env)]
  const [a, b] = servers.map((s) => s.url) as [string, string]
  const results = await Promise.all(
    Array.from({ length: 120 }, (_, i) =>
      i % 3 === 0
        ? post(i % 2 ? a : b, '/api/v1/verify', key, {}) // a 400, counted in its own small transaction
        : post(i % 2 ? a : b, '/api/v1/send', key, { channel: 'sms', recipient: '+15550100001' }),
    ),
  )
  const statuses = results.map((r) => r.status)
  expect(statuses.filter((s) => s !== 429)).toHaveLength(40)
  expect(statuses.filter((s) => s === 429)).toHaveLength(80)
  expect(statuses.filter((s) => s >= 500)).toEqual([])
}, 30_000)

test('one process over a socket: 300 parallel requests, exactly 120 admitted', async () => {
  const h = await start()
  const url = h.listen()
  const rs = await Promise.all(
    Array.from({ length: 300 }, (_, i) =>
      i % 2
        ? post(url, '/api/v1/verify', h.key, { verification_id: 'x', code: '123456' })
        : post(url, '/api/v1/send', h.key, { channel: 'sms', recipient: '+15550100001' }),
    ),
  )
  const limited = rs.filter((r) => r.status === 429)
  expect(rs.length - limited.length).toBe(120)
  for (const r of limited) expect(r.json.error).toBe('Rate limit exceeded: Maximum 120 requests per minute. Please try again in 60 seconds.')
})

test('two processes on one database, at the default limit: 300 parallel requests, exactly 120 admitted', async () => {
  const env = await cliEnv()
  const key = env.json('keys', 'create').key
  const servers = [await startServer(env), await startServer(env)]
  const rs = await Promise.all(
    Array.from({ length: 300 }, (_, i) => post(servers[i % 2]!.url, '/api/v1/verify', key, { verification_id: 'x', code: '123456' })),
  )
  // Real clock here: retry_after may be 59 or 60 depending on when the first request landed.
  expect(rs.filter((r) => r.status === 404 && r.json.error === 'Verification not found')).toHaveLength(120)
  const limited = rs.filter((r) => r.status === 429)
  expect(limited).toHaveLength(180)
  for (const r of limited) expect(r.json.error).toMatch(/^Rate limit exceeded: Maximum 120 requests per minute\. Please try again in (59|60) seconds\.$/)
}, 30_000)
