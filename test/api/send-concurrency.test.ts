/**
 * Concurrent sends (docs/api.md#credits): the debit, the verification and
 * the per-recipient counters are written together, so sends in flight at the
 * same time can neither overspend credits nor exceed a recipient's limit.
 * Deliveries are held at a gate so the sends really overlap.
 */
import { expect, test } from 'bun:test'
import { harnessPerTest, RecordingDelivery, type Result } from '../kit/harness.ts'
import type { OutboundMessage } from '../../src/otp/types.ts'

/** A RecordingDelivery that counts deliveries started (held at the gate or not). */
class CountingDelivery extends RecordingDelivery {
  started = 0
  override deliver(message: OutboundMessage) {
    this.started++
    return super.deliver(message)
  }
}

const harness = harnessPerTest()

async function start(credits: number) {
  const delivery = new CountingDelivery()
  const h = await harness({ credits, delivery })
  let release!: () => void
  delivery.gate = new Promise<void>((r) => (release = r))
  return { h, delivery, release }
}

/**
 * Starts every send, waits (on the event loop, not the clock) until each one has
 * either answered or reached the held delivery, checks the state while they are
 * held, then opens the gate and returns all answers.
 */
async function overlap(
  sends: (() => Promise<Result>)[],
  delivery: CountingDelivery,
  release: () => void,
  whileHeld: (answered: number) => void | Promise<void>,
): Promise<Result[]> {
  let answered = 0
  const all = sends.map((s) =>
    s().then((r) => {
      answered++
      return r
    }),
  )
  // A bound in time, not turns: on PostgreSQL the transactions wait on the network and on row locks.
  const deadline = performance.now() + 10_000
  while (performance.now() < deadline && answered + delivery.started < sends.length) await new Promise((r) => setImmediate(r))
  await whileHeld(answered)
  release()
  return Promise.all(all)
}

const tally = (rs: Result[]) => {
  const t: Record<number, number> = {}
  for (const r of rs) t[r.status] = (t[r.status] ?? 0) + 1
  return t
}

test('40 concurrent sends against 10 credits: exactly 10 succeed, 30 get 402, balance ends at 0', async () => {
  const { h, delivery, release } = await start(10)
  const sends = Array.from({ length: 40 }, (_, i) => () => h.send({ channel: 'sms', recipient: `+1415555${String(i).padStart(4, '0')}` }))
  const rs = await overlap(sends, delivery, release, async (answered) => {
    // While 10 deliveries are held the credits are already reserved.
    expect(delivery.started).toBe(10)
    expect(answered).toBe(30)
    expect((await h.server.admin.balance()).balance).toBe(0)
  })
  expect(tally(rs)).toEqual({ 200: 10, 402: 30 })
  for (const r of rs.filter((r) => r.status === 402)) expect(r.json.error).toBe('Insufficient credits. Please purchase more credits.')
  expect((await h.server.admin.balance()).balance).toBe(0)
  expect(delivery.sent).toHaveLength(10)
  const entries = (await h.server.admin.history()).entries
  expect(entries.filter((e) => e.kind === 'debit')).toHaveLength(10)
  expect(entries.filter((e) => e.kind === 'refund')).toHaveLength(0)
  const ids = rs.filter((r) => r.status === 200).map((r) => r.json.verification_id)
  expect(new Set(ids).size).toBe(10)
})

test('40 concurrent sends over mixed channels against 10 credits never go below 0', async () => {
  const { h, delivery, release } = await start(10)
  const channels = ['sms', 'voice', 'email'] as const
  const sends = Array.from({ length: 40 }, (_, i) => () => {
    const channel = channels[i % 3]!
    const recipient = channel === 'email' ? `user${i}@example.com` : `+1415555${String(i).padStart(4, '0')}`
    return h.send({ channel, recipient })
  })
  const rs = await overlap(sends, delivery, release, async () => expect((await h.server.admin.balance()).balance).toBe(0))
  expect(tally(rs)).toEqual({ 200: 10, 402: 30 })
  expect((await h.server.admin.balance()).balance).toBe(0)
})

test('100 concurrent sends to one recipient: exactly 2 are accepted, the rest get 429', async () => {
  const { h, delivery, release } = await start(100)
  const sends = Array.from({ length: 100 }, () => () => h.send({ channel: 'sms', recipient: '+14155550123' }))
  const rs = await overlap(sends, delivery, release, async (answered) => {
    expect(delivery.started).toBe(2)
    expect(answered).toBe(98)
  })
  expect(tally(rs)).toEqual({ 200: 2, 429: 98 })
  for (const r of rs.filter((r) => r.status === 429)) {
    expect(r.json.error).toBe('Rate limit exceeded: Maximum 2 verification codes per minute. Please try again in 60 seconds.')
    expect(r.json.retry_after).toBe(60)
  }
  expect((await h.server.admin.balance()).balance).toBe(98)
  expect(delivery.sent).toHaveLength(2)
})

test('100 concurrent sends to one email in different cases: exactly 2 are accepted', async () => {
  const { h, delivery, release } = await start(100)
  const cases = ['ada@example.com', 'Ada@Example.com', 'ADA@EXAMPLE.COM', 'ada@EXAMPLE.com']
  const sends = Array.from({ length: 100 }, (_, i) => () => h.send({ channel: 'email', recipient: cases[i % 4]! }))
  const rs = await overlap(sends, delivery, release, () => {})
  expect(tally(rs)).toEqual({ 200: 2, 429: 98 })
  expect((await h.server.admin.balance()).balance).toBe(98)
})

test('concurrent sends whose deliveries fail: all credits come back and nothing counts', async () => {
  const { h, delivery, release } = await start(10)
  delivery.fail = true
  const sends = Array.from({ length: 20 }, (_, i) => () => h.send({ channel: 'sms', recipient: `+1415555${String(i % 5).padStart(4, '0')}` }))
  const rs = await overlap(sends, delivery, release, async () => expect((await h.server.admin.balance()).balance).toBe(0))
  // 5 recipients x 2 per minute = 10 reservations; the other 10 are limited (429),
  // because at that moment the reservations were in flight.
  expect(tally(rs)).toEqual({ 429: 10, 500: 10 })
  expect((await h.server.admin.balance()).balance).toBe(10)
  const entries = (await h.server.admin.history()).entries
  expect(entries.filter((e) => e.kind === 'refund')).toHaveLength(10)
  // The failed sends were released from the recipients' counts.
  delivery.fail = false
  delivery.gate = null
  expect((await h.send({ channel: 'sms', recipient: '+14155550000' })).status).toBe(200)
  expect((await h.send({ channel: 'sms', recipient: '+14155550000' })).status).toBe(200)
})
