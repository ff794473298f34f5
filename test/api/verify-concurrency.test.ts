/**
 * Verify under concurrency (a code verifies at most once,
 * docs/api.md#verify-a-code; the lockout holds under parallel guesses), also
 * over a real socket, and verify state across a restart (the counters live in
 * the database, docs/api.md#limits).
 */
import { describe, expect, test } from 'bun:test'
import { post } from '../kit/cli.ts'
import { harnessPerTest, TEST, type Harness, type HarnessOptions, type Result } from '../kit/harness.ts'

const LOCKED = 'Too many failed attempts. Please try again in 15 minutes or request a new code.'

let h: Harness
const harness = harnessPerTest()
const start = async (opts: HarnessOptions = {}) => (h = await harness(opts))
/** Restarts and keeps using the original key (the restarted harness's default key is a new one). */
const restart = async () => (h = await h.restart())

const sendTest = async (): Promise<string> => {
  const r = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS, expires_in: 3600 }, h.key)
  expect(r.status).toBe(200)
  return r.json.verification_id
}
const verify = (id: string, code: string) => h.verify({ verification_id: id, code }, h.key)

function tally(results: { status: number; message: string }[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const r of results) out[`${r.status} ${r.message}`] = (out[`${r.status} ${r.message}`] ?? 0) + 1
  return out
}

function expectResult(r: Result, verified: boolean, message: string) {
  expect(r.status).toBe(200)
  expect(r.json).toEqual({ success: true, verified, message, request_id: r.headers.get('x-request-id') })
}

function expectLocked(r: Result, retryAfter: number) {
  expect(r.status).toBe(429)
  expect(r.json).toEqual({ success: true, verified: false, message: LOCKED, request_id: r.headers.get('x-request-id'), retry_after: retryAfter })
  expect(r.headers.get('retry-after')).toBe(String(retryAfter))
}

describe('concurrent verifies', () => {
  test('50 parallel verifies of the correct code (app.handle): exactly one succeeds', async () => {
    await start()
    const id = await sendTest()
    const results = await Promise.all(Array.from({ length: 50 }, () => verify(id, '123456')))
    expect(tally(results.map((r) => ({ status: r.status, message: r.json.message })))).toEqual({
      '200 Code verified successfully': 1,
      '200 Code already used': 49,
    })
    expect(results.filter((r) => r.json.verified === true)).toHaveLength(1)
    expect(h.logs.filter((l) => l.includes(`"level":"error"`))).toEqual([])
  })

  test('50 parallel verifies over a real port: exactly one succeeds, no 500', async () => {
    await start()
    const id = await sendTest()
    h.server.http.listen({ hostname: '127.0.0.1', port: 0 })
    try {
      const port = h.server.http.server!.port
      expect(port).toBeGreaterThan(0)
      const one = async () => {
        const res = await fetch(`http://127.0.0.1:${port}/api/v1/verify`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${h.key}` },
          body: JSON.stringify({ verification_id: id, code: '123456' }),
        })
        const json = (await res.json()) as Record<string, unknown>
        expect(json.request_id).toBe(res.headers.get('x-request-id')!)
        return { status: res.status, message: String(json.message ?? json.error), verified: json.verified }
      }
      const results = await Promise.all(Array.from({ length: 50 }, one))
      expect(tally(results)).toEqual({ '200 Code verified successfully': 1, '200 Code already used': 49 })
    } finally {
      await h.server.http.stop()
    }
  })

  test("parallel wrong guesses on 6 verifications of one recipient: exactly the recipient's cap of 3 are compared", async () => {
    const sends = { recipient_per_minute: 10, recipient_per_hour: 10, recipient_per_day: 10 }
    await start({ credits: 10, config: { limits: { ...sends, recipient_failures_per_day: 3, max_failed_attempts: 100 } } })
    const ids: string[] = []
    for (let i = 0; i < 6; i++) {
      const r = await h.send({ channel: 'sms', recipient: '+14155550123', expires_in: 3600 }, h.key)
      expect(r.status).toBe(200)
      ids.push(r.json.verification_id)
    }
    const results = await Promise.all(Array.from({ length: 18 }, (_, i) => verify(ids[i % 6]!, String(100000 + i))))
    expect(tally(results.map((r) => ({ status: r.status, message: r.json.message })))).toEqual({
      '200 Invalid code': 3,
      [`429 ${LOCKED}`]: 15,
    })
  })

  test('20 parallel wrong guesses: exactly 5 are compared, the rest meet the lock', async () => {
    await start()
    const id = await sendTest()
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => verify(id, String(100000 + i))))
    expect(tally(results.map((r) => ({ status: r.status, message: r.json.message })))).toEqual({
      '200 Invalid code': 5,
      [`429 ${LOCKED}`]: 15,
    })
    expectLocked(await verify(id, '123456'), 900)
  })

  test('200 parallel verifies of a real code over a socket: exactly one succeeds', async () => {
    await start({ credits: 1, config: { limits: { key_requests_per_minute: 1000 } } })
    const url = h.listen()
    const sent = await post(url, '/api/v1/send', h.key, { channel: 'sms', recipient: '+14155550123', code: '27182818' })
    expect(sent.status).toBe(200)
    const rs = await Promise.all(
      Array.from({ length: 200 }, () => post(url, '/api/v1/verify', h.key, { verification_id: sent.json.verification_id, code: '27182818' })),
    )
    expect(tally(rs.map((r) => ({ status: r.status, message: r.json.message ?? r.json.error })))).toEqual({
      '200 Code verified successfully': 1,
      '200 Code already used': 199,
    })
  })
})

describe('state survives a restart', () => {
  test('a valid verification still verifies with its code after a restart', async () => {
    await start({ credits: 1 })
    const sent = await h.send({ channel: 'email', recipient: 'ada@example.com' })
    const code = h.delivery.lastCode()
    await restart()
    expectResult(await verify(sent.json.verification_id, code), true, 'Code verified successfully')
  })

  test('a used verification stays used', async () => {
    await start()
    const id = await sendTest()
    expectResult(await verify(id, '123456'), true, 'Code verified successfully')
    await restart()
    expectResult(await verify(id, '123456'), false, 'Code already used')
  })

  test('a locked verification stays locked, with the same retry_after', async () => {
    await start()
    const id = await sendTest()
    for (let i = 0; i < 5; i++) expectResult(await verify(id, '000000'), false, 'Invalid code')
    h.clock.advance(100_500)
    expectLocked(await verify(id, '123456'), 800)
    await restart()
    expectLocked(await verify(id, '123456'), 800)
    h.clock.advance(799_500)
    expectResult(await verify(id, '123456'), true, 'Code verified successfully')
  })

  test('the failed-attempt counter survives: 3 before and 2 after a restart lock it', async () => {
    await start()
    const id = await sendTest()
    for (let i = 0; i < 3; i++) expectResult(await verify(id, '000000'), false, 'Invalid code')
    await restart()
    for (let i = 0; i < 2; i++) expectResult(await verify(id, '000000'), false, 'Invalid code')
    expectLocked(await verify(id, '123456'), 900)
  })

  test('the per-recipient failure count survives a restart', async () => {
    // A real recipient: the cap spares test recipients (docs/api.md#test-recipients).
    await start({ credits: 2, config: { limits: { recipient_failures_per_day: 4, max_failed_attempts: 100 } } })
    const sendReal = async () =>
      (await h.send({ channel: 'sms', recipient: '+14155550177', code: '123456', expires_in: 3600 }, h.key)).json.verification_id as string
    const first = await sendReal()
    for (let i = 0; i < 4; i++) expectResult(await verify(first, '000000'), false, 'Invalid code')
    h.clock.advance(3_600_000)
    await restart()
    // The cap holds after the restart: send refuses a new code for 23 h (docs/api.md#hardening).
    const second = await h.send({ channel: 'sms', recipient: '+14155550177' }, h.key)
    expect(second.status).toBe(429)
    expect(second.json.retry_after).toBe(23 * 3600)
    expect(second.json.error).toBe(`Rate limit exceeded: too many failed attempts for this recipient. Please try again in ${23 * 3600} seconds.`)
  })

  test('per-recipient send counters survive a restart', async () => {
    await start({ credits: 5 })
    const recipient = '+14155550199'
    for (let i = 0; i < 2; i++) expect((await h.send({ channel: 'sms', recipient })).status).toBe(200)
    h.clock.advance(15_000)
    await restart()
    const r = await h.send({ channel: 'sms', recipient }, h.key)
    expect(r.status).toBe(429)
    expect(r.json).toEqual({
      error: 'Rate limit exceeded: Maximum 2 verification codes per minute. Please try again in 45 seconds.',
      request_id: r.headers.get('x-request-id'),
      retry_after: 45,
    })
    expect(r.headers.get('retry-after')).toBe('45')
  })
})
