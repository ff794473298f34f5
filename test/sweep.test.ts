/** DECISIONS.md section 8: retention sweep of verifications and window counters. */
import { afterEach, expect, test } from 'bun:test'
import { createHarness, DAY, TEST, type Harness } from './harness.ts'

let h: Harness
afterEach(() => h?.close())

const count = (h: Harness, table: string) => (h.server.db.$client.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n

test('verifications are deleted retention.days after they expire, not before', async () => {
  h = createHarness({ config: { retention: { days: 2 } } })
  const sent = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS, expires_in: 600 })
  h.clock.advance(600_000 + 2 * DAY - 1)
  expect(h.server.sweep().verifications).toBe(0)
  expect((await h.verify({ verification_id: sent.json.verification_id, code: '123456' })).json.message).toBe('Code expired')
  h.clock.advance(2)
  expect(h.server.sweep().verifications).toBe(1)
  expect((await h.verify({ verification_id: sent.json.verification_id, code: '123456' })).status).toBe(404)
})

test('request and failure counters are pruned once outside their window', async () => {
  h = createHarness()
  const sent = await h.send({ channel: 'sms', recipient: TEST.PHONE_FAIL })
  await h.verify({ verification_id: sent.json.verification_id, code: '000000' })
  expect(count(h, 'key_hits')).toBe(2)
  expect(count(h, 'recipient_failures')).toBe(1)
  h.clock.advance(60_001)
  expect(h.server.sweep()).toMatchObject({ keyHits: 2, recipientFailures: 0 })
  h.clock.advance(DAY)
  expect(h.server.sweep()).toMatchObject({ recipientFailures: 1 })
  expect(count(h, 'key_hits')).toBe(0)
})

test('the sweep keeps what the per-recipient limits still need', async () => {
  h = createHarness({ credits: 3, config: { retention: { days: 1 } } })
  await h.send({ channel: 'sms', recipient: '+14155550123', expires_in: 60 })
  await h.send({ channel: 'sms', recipient: '+14155550123', expires_in: 60 })
  h.server.sweep()
  const third = await h.send({ channel: 'sms', recipient: '+14155550123' })
  expect(third.status).toBe(429)
})
