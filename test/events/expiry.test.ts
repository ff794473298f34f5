/**
 * verification.expired (docs/api.md#events): reported once, for a
 * verification that expired unused (not a used, failed or canceled one; a
 * locked one left to expire, yes), and by the running loop on its own within
 * 2 minutes of expires_at.
 */
import { expect, test } from 'bun:test'
import { deliverEvents, eventTypes, sendSettled } from '../kit/events.ts'
import { harnessPerTest, MINUTE, type Harness, type HarnessOptions } from '../kit/harness.ts'
import { RECORDING_RECEIPTS } from '../kit/receipts.ts'
import { receiverPerTest } from '../kit/webhook-receiver.ts'

const start = harnessPerTest({ credits: 20, ...RECORDING_RECEIPTS })
const receiver = receiverPerTest()

/** A server whose first expiry scan has run: it starts the cursor, as serve does at start. */
async function scanning(opts: HarnessOptions = {}): Promise<Harness> {
  const h = await start(opts)
  await h.server.events.scanExpired(true)
  return h
}

test('an expiry is reported once, and not for a used or failed verification', async () => {
  const h = await scanning({ credits: 100 })
  const rx = receiver()
  await h.server.webhooks.add({ url: rx.url })
  const used = (await h.send({ channel: 'sms', recipient: '+14155550001' })).json.verification_id
  await h.verify({ verification_id: used, code: h.delivery.lastCode() })
  h.delivery.fail = true
  await h.send({ channel: 'sms', recipient: '+14155550002' })
  h.delivery.fail = false
  const left = (await h.send({ channel: 'sms', recipient: '+14155550003' })).json.verification_id
  h.clock.advance(4 * MINUTE)
  expect(await h.server.events.scanExpired(true)).toBe(0)
  h.clock.advance(MINUTE)
  expect(await h.server.events.scanExpired(true)).toBe(1)
  h.clock.advance(MINUTE)
  expect(await h.server.events.scanExpired(true)).toBe(0)
  await deliverEvents(h)
  expect(rx.received.filter((r) => r.json.type === 'verification.expired').map((r) => r.json.data.verification_id)).toEqual([left])
})

test('not for a canceled one (pending or locked when canceled); yes for a locked one left to expire', async () => {
  const h = await scanning()
  const canceled = await sendSettled(h, '+14155550101', { expires_in: 60 })
  expect((await h.call(`/api/v1/verifications/${canceled}/cancel`, undefined, { headers: {} })).status).toBe(200)
  const lockedThenCanceled = await sendSettled(h, '+14155550102', { expires_in: 60 })
  for (let i = 0; i < 5; i++) await h.verify({ verification_id: lockedThenCanceled, code: '00000000' })
  expect((await h.call(`/api/v1/verifications/${lockedThenCanceled}/cancel`, undefined, { headers: {} })).status).toBe(200)
  const locked = await sendSettled(h, '+14155550103', { expires_in: 60 })
  for (let i = 0; i < 5; i++) await h.verify({ verification_id: locked, code: '00000000' })
  h.clock.advance(2 * MINUTE)
  expect(await h.server.events.scanExpired(true)).toBe(1)
  expect(await eventTypes(h, canceled)).toEqual(['verification.sent', 'verification.canceled'])
  expect((await eventTypes(h, lockedThenCanceled)).filter((t) => t !== 'verification.attempt_failed')).toEqual([
    'verification.sent',
    'verification.locked',
    'verification.canceled',
  ])
  expect((await eventTypes(h, locked)).at(-1)).toBe('verification.expired')
})

test('the running loop reports an expiry on its own, within 2 min of expires_at', async () => {
  const h = await scanning()
  const rx = receiver()
  await h.server.webhooks.add({ url: rx.url, events: 'verification.expired' })
  const id = await sendSettled(h, '+14155550123', { expires_in: 60 })
  const expiresAt = h.clock.now() + 60_000
  h.server.events.start()
  try {
    // A fixed wait: longer than the loop's 1 s pass (a real timer), to show it reports nothing before expires_at.
    await Bun.sleep(1_200)
    expect(rx.received).toHaveLength(0)
    h.clock.set(expiresAt + 1_000)
    const got = await Promise.race([rx.arrival(1), Bun.sleep(5_000).then(() => null)])
    expect(got).not.toBeNull()
    expect(got!.json).toMatchObject({ type: 'verification.expired', data: { verification_id: id, status: 'expired' } })
    const lag = Date.parse(got!.json.occurred_at) - expiresAt
    expect(lag).toBeGreaterThanOrEqual(0)
    expect(lag).toBeLessThanOrEqual(2 * MINUTE)
  } finally {
    // The loop's pass under way ends before the harness closes the storage.
    await h.server.events.stop()
  }
}, 15_000)
