/**
 * The events of a lockout by the recipient's failure cap
 * (docs/api.md#lockout, docs/api.md#events): the failure that fills the cap
 * reports status `locked` and starts verification.locked with the wait verify
 * then answers; with the verification's own lockout at once, the longer wait;
 * a test recipient is exempt from the cap.
 */
import { describe, expect, test } from 'bun:test'
import { nthAfter } from '../../src/otp/failure-cap.ts'
import { deliverEvents, eventTypes, sendSettled } from '../kit/events.ts'
import { harnessPerTest, HOUR, MINUTE, TEST, type Harness } from '../kit/harness.ts'
import { RECORDING_RECEIPTS } from '../kit/receipts.ts'
import { receiverPerTest, type Receiver } from '../kit/webhook-receiver.ts'

const start = harnessPerTest({ credits: 20, env: RECORDING_RECEIPTS.env })
const receiver = receiverPerTest()

/** A server with these limits, whose first expiry scan has run (as serve does at start), and a receiver for every event. */
async function setup(limits: Record<string, number>): Promise<{ h: Harness; rx: Receiver }> {
  const h = await start({ config: { ...RECORDING_RECEIPTS.config, limits } })
  await h.server.events.scanExpired(true)
  const rx = receiver()
  await h.server.webhooks.add({ url: rx.url })
  return { h, rx }
}

/** The `data` of a verification's events as the receiver got them, by sequence. */
async function dataOf(h: Harness, rx: Receiver, id: string): Promise<Record<string, any>[]> {
  await deliverEvents(h)
  return rx.received
    .map((r) => r.json.data)
    .filter((d) => d.verification_id === id)
    .sort((a, b) => a.sequence - b.sequence)
}

describe("a lockout of the recipient's failure cap", () => {
  test('the failure that fills the cap reports status locked and starts verification.locked with the wait verify then answers', async () => {
    const { h, rx } = await setup({ recipient_failures_per_day: 3, max_failed_attempts: 100 })
    const t0 = h.clock.now()
    const first = await sendSettled(h, '+14155550123', { expires_in: 3600 })
    await h.verify({ verification_id: first, code: '00000000' })
    h.clock.advance(MINUTE)
    const second = await sendSettled(h, '+14155550123', { expires_in: 3600 })
    await h.verify({ verification_id: second, code: '00000000' })
    h.clock.advance(MINUTE)
    await h.verify({ verification_id: second, code: '00000000' }) // the 3rd failure of the recipient: the cap is full
    const wait = (t0 + 24 * HOUR - h.clock.now()) / 1000
    expect((await dataOf(h, rx, second)).map((d) => [d.sequence, d.status, d.failed_attempts ?? d.retry_after ?? null])).toEqual([
      [1, 'pending', null],
      [2, 'pending', 1],
      [3, 'locked', 2],
      [4, 'locked', wait],
    ])
    expect(await eventTypes(h, second)).toEqual(['verification.sent', 'verification.attempt_failed', 'verification.attempt_failed', 'verification.locked'])
    // What GET and verify say agree with the events.
    expect((await h.call(`/api/v1/verifications/${second}`, undefined, { method: 'GET' })).json.status).toBe('locked')
    const v = await h.verify({ verification_id: second, code: '00000000' })
    expect([v.status, v.json.retry_after]).toEqual([429, wait])
  })

  test('a cap of 1: the first failure fills it', async () => {
    const { h, rx } = await setup({ recipient_failures_per_day: 1, max_failed_attempts: 100 })
    const id = await sendSettled(h, '+14155550123', { expires_in: 3600 })
    await h.verify({ verification_id: id, code: '00000000' })
    expect((await dataOf(h, rx, id)).map((d) => [d.sequence, d.status, d.failed_attempts ?? d.retry_after ?? null])).toEqual([
      [1, 'pending', null],
      [2, 'locked', 1],
      [3, 'locked', 86_400],
    ])
  })

  test('a failure that refills a cap whose oldest failure has left the window: locked until the next oldest leaves', async () => {
    const { h, rx } = await setup({ recipient_failures_per_day: 2, max_failed_attempts: 100 })
    const first = await sendSettled(h, '+14155550123', { expires_in: 3600 })
    await h.verify({ verification_id: first, code: '00000000' })
    h.clock.advance(MINUTE)
    const kept = h.clock.now()
    await h.verify({ verification_id: first, code: '00000000' }) // the cap is full for 24 hours
    h.clock.advance(24 * HOUR - MINUTE + 30_000) // the first failure left the window 30 s ago
    const id = await sendSettled(h, '+14155550123', { expires_in: 3600 })
    await h.verify({ verification_id: id, code: '00000000' })
    const wait = (kept + 24 * HOUR - h.clock.now()) / 1000
    expect((await dataOf(h, rx, id)).map((d) => [d.sequence, d.status, d.failed_attempts ?? d.retry_after ?? null])).toEqual([
      [1, 'pending', null],
      [2, 'locked', 1],
      [3, 'locked', wait],
    ])
    expect(wait).toBe(30)
  })

  test('its own lockout and the cap at once: retry_after is the longer wait', async () => {
    const { h, rx } = await setup({ recipient_failures_per_day: 5, max_failed_attempts: 5 })
    const id = await sendSettled(h, '+14155550123', { expires_in: 3600 })
    for (let i = 0; i < 5; i++) await h.verify({ verification_id: id, code: '00000000' })
    expect((await dataOf(h, rx, id)).filter((d) => d.retry_after !== undefined).map((d) => [d.status, d.retry_after])).toEqual([['locked', 86_400]])
  })

  test('a test recipient is exempt from the cap: only its own lockout reports locked', async () => {
    const { h, rx } = await setup({ recipient_failures_per_day: 2, max_failed_attempts: 5 })
    const id = (await h.send({ channel: 'sms', recipient: TEST.PHONE_FAIL })).json.verification_id as string
    for (let i = 0; i < 5; i++) await h.verify({ verification_id: id, code: '123456' })
    expect((await dataOf(h, rx, id)).map((d) => [d.status, d.test, d.failed_attempts ?? d.retry_after ?? null])).toEqual([
      ['pending', true, null],
      ['pending', true, 1],
      ['pending', true, 2],
      ['pending', true, 3],
      ['pending', true, 4],
      ['locked', true, 5],
      ['locked', true, 900],
    ])
  })
})

describe('the cap once a failure counts, from one look-up (nthAfter)', () => {
  // Times newest first: the log's n-th and (n-1)-th latest, and the new failure's time.
  test.each([
    ['n = 1, an empty log', 1, undefined, undefined, 50, 50],
    ['n = 1, a newer failure than the new one (the clock went back)', 1, 60, undefined, 50, 60],
    ['n = 3, fewer than 2 before: fewer than 3 after', 3, undefined, undefined, 50, undefined],
    ['n = 3, exactly 2 before: the new one or the older of the two', 3, undefined, 40, 50, 40],
    ['n = 3, exactly 2 before, the new one older than both', 3, undefined, 40, 30, 30],
    ['n = 3, the new one the newest', 3, 20, 40, 50, 40],
    ['n = 3, the new one between the two (the clock went back)', 3, 20, 40, 30, 30],
    ['n = 3, the new one older than both', 3, 20, 40, 10, 20],
  ] as const)('%s', (_name, n, nth, previous, at, expected) => {
    expect(nthAfter(n, nth, previous, at)).toBe(expected)
  })
})
