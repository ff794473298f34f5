/** The retention sweep of verifications and window counters (docs/api.md#retention). */
import { expect, test } from 'bun:test'
import { DAY, harnessPerTest, ON_PG, TEST, type Harness } from '../kit/harness.ts'

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

test('a bounded step looks only at the maxRows oldest rows of a table kept in write order (events; key hits on SQLite): an old row behind younger ones waits for them', async () => {
  const h = await start({ config: { retention: { days: 1 } } })
  const T = h.clock.now()
  // Events 1 and 2 at T + 10 s, event 3 at T (a clock stepped back): the numbering is no longer time order.
  await h.server.storage.write(async (r) => {
    for (const at of [T + 10_000, T + 10_000, T]) await r.events.add({ type: 'send.blocked', accountId: 1, at, verification: null, status: null, extra: {} })
  })
  // SQLite keeps no index of window rows by time: hits made the same way.
  for (const at of [T + 10_000, T + 10_000, T]) {
    h.clock.set(at)
    await h.verify({})
  }
  // Hit 3 alone is past its minute; the 2 oldest by number are not, so a step of 2 leaves it (PostgreSQL finds hits by time).
  h.clock.set(T + 65_000)
  expect(await h.server.sweep(2)).toMatchObject({ events: 0, keyHits: ON_PG ? 1 : 0 })
  expect(await count(h, 'key_hits')).toBe(ON_PG ? 2 : 3)
  // The same for event 3, a day on.
  h.clock.set(T + DAY + 5_000)
  expect(await h.server.sweep(2)).toMatchObject({ events: 0 })
  expect(await count(h, 'events')).toBe(3)
  h.clock.advance(10_000)
  expect(await h.server.sweep(2)).toMatchObject({ events: 2 })
  expect(await h.server.sweep(2)).toMatchObject({ events: 1 })
  expect(await count(h, 'events')).toBe(0)
  expect(await count(h, 'key_hits')).toBe(0)
})
