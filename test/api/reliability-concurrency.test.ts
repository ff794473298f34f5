/**
 * Concurrency that the other concurrency tests leave out (issue 4, item 3):
 * 200 parallel verifies of a real (charged) code over a real socket, and the
 * per-key limit exact under concurrency, in one process and across two
 * processes on one database. scripts/proofs/concurrency.ts runs all four figures
 * against the compiled binary.
 */
import { afterEach, expect, test } from 'bun:test'
import { cleanUpAfterEach, cliEnv, post, startServer, type CliEnv, type RunningServer } from '../kit/cli.ts'
import { createHarness, type Harness } from '../kit/harness.ts'

let h: Harness | undefined
let env: CliEnv | undefined
let servers: RunningServer[] = []
cleanUpAfterEach()
afterEach(() => {
  h?.close()
  h = undefined
  servers = []
})

const tally = (rs: { status: number; json: Record<string, any> }[]) => {
  const t: Record<string, number> = {}
  for (const r of rs) t[`${r.status} ${r.json.message ?? r.json.error}`] = (t[`${r.status} ${r.json.message ?? r.json.error}`] ?? 0) + 1
  return t
}

test('200 parallel verifies of a real code over a socket: exactly one succeeds', async () => {
  h = await createHarness({ credits: 1, config: { limits: { key_requests_per_minute: 1000 } } })
  const url = h.listen()
  const sent = await post(url, '/api/v1/send', h.key, { channel: 'sms', recipient: '+14155550123', code: '27182818' })
  expect(sent.status).toBe(200)
  const rs = await Promise.all(
    Array.from({ length: 200 }, () => post(url, '/api/v1/verify', h!.key, { verification_id: sent.json.verification_id, code: '27182818' })),
  )
  expect(tally(rs)).toEqual({ '200 Code verified successfully': 1, '200 Code already used': 199 })
})

test('per-key limit under concurrency, one process: 300 parallel requests, exactly 120 admitted', async () => {
  h = await createHarness()
  const url = h.listen()
  const rs = await Promise.all(
    Array.from({ length: 300 }, (_, i) =>
      i % 2
        ? post(url, '/api/v1/verify', h!.key, { verification_id: 'x', code: '123456' })
        : post(url, '/api/v1/send', h!.key, { channel: 'sms', recipient: '+15550100001' }),
    ),
  )
  const limited = rs.filter((r) => r.status === 429)
  expect(rs.length - limited.length).toBe(120)
  for (const r of limited) expect(r.json.error).toBe('Rate limit exceeded: Maximum 120 requests per minute. Please try again in 60 seconds.')
})

test('per-key limit under concurrency, two processes on one database: exactly 120 admitted', async () => {
  env = cliEnv()
  const key = env.json('keys', 'create').key
  servers = [await startServer(env), await startServer(env)]
  const rs = await Promise.all(
    Array.from({ length: 300 }, (_, i) => post(servers[i % 2]!.url, '/api/v1/verify', key, { verification_id: 'x', code: '123456' })),
  )
  // Real clock here: retry_after may be 59 or 60 depending on when the first request landed.
  expect(rs.filter((r) => r.status === 404 && r.json.error === 'Verification not found')).toHaveLength(120)
  const limited = rs.filter((r) => r.status === 429)
  expect(limited).toHaveLength(180)
  for (const r of limited) expect(r.json.error).toMatch(/^Rate limit exceeded: Maximum 120 requests per minute\. Please try again in (59|60) seconds\.$/)
}, 30_000)
