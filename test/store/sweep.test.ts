/** The retention sweep of verifications and window counters (docs/api.md#retention). */
import { expect, test } from 'bun:test'
import { DAY, harnessPerTest, TEST, type Harness } from '../kit/harness.ts'

const start = harnessPerTest()

const count = async (h: Harness, table: string) => Number((await h.sql(`SELECT count(*) AS n FROM ${table}`))[0]!.n)

test('verifications are deleted retention.days after they expire, not before', async () => {
  const h = await start({ config: { retention: { days: 2 } } })
  const sent = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS, expires_in: 600 })
  h.clock.advance(600_000 + 2 * DAY - 1)
  expect((await h.server.sweep()).verifications).toBe(0)
  expect((await h.verify({ verification_id: sent.json.verification_id, code: '123456' })).json.message).toBe('Code expired')
  h.clock.advance(2)
  expect((await h.server.sweep()).verifications).toBe(1)
  expect((await h.verify({ verification_id: sent.json.verification_id, code: '123456' })).status).toBe(404)
})

test('request and failure counters are pruned once outside their window', async () => {
  const h = await start({ credits: 1 })
  // A real recipient: test recipients record no failures (the cap spares them, docs/api.md#test-recipients).
  const sent = await h.send({ channel: 'sms', recipient: '+14155550123', code: '123456' })
  await h.verify({ verification_id: sent.json.verification_id, code: '000000' })
  expect(await count(h, 'key_hits')).toBe(2)
  expect(await count(h, 'recipient_failures')).toBe(1)
  h.clock.advance(60_001)
  expect(await h.server.sweep()).toMatchObject({ keyHits: 2, recipientFailures: 0 })
  h.clock.advance(DAY)
  expect(await h.server.sweep()).toMatchObject({ recipientFailures: 1 })
  expect(await count(h, 'key_hits')).toBe(0)
})

test('the sweep keeps what the per-recipient limits still need', async () => {
  const h = await start({ credits: 3, config: { retention: { days: 1 } } })
  await h.send({ channel: 'sms', recipient: '+14155550123', expires_in: 60 })
  await h.send({ channel: 'sms', recipient: '+14155550123', expires_in: 60 })
  await h.server.sweep()
  const third = await h.send({ channel: 'sms', recipient: '+14155550123' })
  expect(third.status).toBe(429)
})

test('a bounded sweep deletes at most maxRows per table, oldest first, and says when there may be more', async () => {
  const h = await start()
  for (let i = 0; i < 5; i++) {
    await h.verify({})
    h.clock.advance(1_000)
  }
  h.clock.advance(60_000 - 2_500) // the two newest hits are still inside the window
  const { sweptToBound } = await import('../../src/store/engine.ts')
  const first = await h.server.sweep(2)
  expect(first.keyHits).toBe(2)
  expect(sweptToBound(first, 2)).toBe(true)
  const second = await h.server.sweep(2)
  expect(second.keyHits).toBe(1)
  expect(sweptToBound(second, 2)).toBe(false)
  const left = await h.sql('SELECT seq FROM key_hits ORDER BY seq')
  expect(left.map((r) => Number(r.seq))).toEqual([4, 5])
})
