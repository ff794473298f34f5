/**
 * The ceiling on sends in flight (docs/api.md#overload), on both engines:
 * past `delivery.max_sends_in_flight` a send answers the documented 503 with
 * Retry-After at once, before its key or body is read: no credit charged, no
 * per-key hit counted, nothing written. Sends under way finish as usual, and
 * room comes back as they end.
 */
import { expect, test } from 'bun:test'
import { resolveConfig } from '../../src/config/load.ts'
import { harnessPerTest, RecordingDelivery, TEST } from '../kit/harness.ts'
import { waitFor } from '../kit/wait-for.ts'

const OVERLOADED = 'Too many sends in progress. Please try again in 1 second.'
const start = harnessPerTest()

/** A harness whose deliveries wait until `release()`; `max` sends may be in flight. */
async function held(max: number, keyPerMinute = 1000) {
  const delivery = new RecordingDelivery()
  let release!: () => void
  delivery.gate = new Promise<void>((r) => {
    release = r
  })
  const h = await start({
    credits: 10,
    delivery,
    config: { delivery: { max_sends_in_flight: max }, limits: { key_requests_per_minute: keyPerMinute } },
  })
  return { h, delivery, release }
}

const rows = async (h: Awaited<ReturnType<typeof held>>['h']) => Number((await h.sql('SELECT COUNT(*) AS n FROM verifications'))[0]!.n)

test('past the ceiling: 503 with Retry-After at once; nothing charged, counted or written; room comes back as sends end', async () => {
  // The per-key limit (5 a minute) would refuse the 6th request if the refused ones counted.
  const { h, delivery, release } = await held(2, 5)
  const under = [h.send({ channel: 'sms', recipient: '+14155550101' }), h.send({ channel: 'sms', recipient: '+14155550102' })]
  await waitFor(async () => (await rows(h)) === 2, { what: 'two sends under way' })
  for (let i = 0; i < 3; i++) {
    const started = performance.now()
    const r = await h.send({ channel: 'sms', recipient: '+14155550103' })
    expect(performance.now() - started).toBeLessThan(200)
    expect([r.status, r.json]).toEqual([503, { error: OVERLOADED, retry_after: 1, request_id: r.headers.get('x-request-id') }])
    expect(r.headers.get('retry-after')).toBe('1')
  }
  // Refused before the key is read: a wrong key gets the same answer.
  const wrongKey = await h.send({ channel: 'sms', recipient: '+14155550103' }, 'otpd_live_wrong')
  expect([wrongKey.status, wrongKey.json.error]).toEqual([503, OVERLOADED])
  expect(await rows(h)).toBe(2)
  expect((await h.server.admin.balance()).balance).toBe(8)
  // The request log names the refusal (docs/operating.md#logs); its repeats within 10 s are held back, as every warning's.
  const refused = h.logs.map((l) => JSON.parse(l)).filter((l) => l.outcome === 'overloaded')
  expect(refused.map((l) => [l.level, l.status])).toEqual([['warn', 503]])
  release()
  expect((await Promise.all(under)).map((r) => r.status)).toEqual([200, 200])
  const after = await h.send({ channel: 'sms', recipient: '+14155550103' })
  expect(after.status).toBe(200)
  expect(delivery.sent).toHaveLength(3)
  expect((await h.server.admin.balance()).balance).toBe(7)
})

test('a send that ended in an error or a refusal gives its room back', async () => {
  const { h, release } = await held(1)
  release()
  expect((await h.send({ channel: 'sms', recipient: 'nope' })).status).toBe(400)
  expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).status).toBe(200)
  expect((await h.send({ channel: 'sms', recipient: '+14155550101' })).status).toBe(200)
})

test('verify, status and the other endpoints are not held by the ceiling', async () => {
  const { h, release } = await held(1)
  const first = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  const under = h.send({ channel: 'sms', recipient: '+14155550101' })
  await waitFor(async () => (await rows(h)) === 2, { what: 'a send under way' })
  expect((await h.send({ channel: 'sms', recipient: '+14155550102' })).status).toBe(503)
  const v = await h.verify({ verification_id: first.json.verification_id, code: '123456' })
  expect([v.status, v.json.verified]).toEqual([200, true])
  release()
  expect((await under).status).toBe(200)
})

test('a reload changes the ceiling for the next send', async () => {
  const { h, release } = await held(1)
  const under = h.send({ channel: 'sms', recipient: '+14155550101' })
  await waitFor(async () => (await rows(h)) === 1, { what: 'a send under way' })
  expect((await h.send({ channel: 'sms', recipient: '+14155550102' })).status).toBe(503)
  const config = resolveConfig({ ...h.server.config, delivery: { ...h.server.config.delivery, max_sends_in_flight: 2 } })
  h.server.reload(config)
  const second = h.send({ channel: 'sms', recipient: '+14155550102' })
  await waitFor(async () => (await rows(h)) === 2, { what: 'a second send under way' })
  release()
  expect([(await under).status, (await second).status]).toEqual([200, 200])
})
