/**
 * The ceiling on queued events (docs/events.md#a-ceiling-on-queued-events),
 * on both engines, with the loop as serve runs it and the injected clock:
 * once the outbox holds `events.max_queued` pending deliveries (here behind
 * an endpoint that never answers), a send answers the documented 503 with
 * Retry-After at once, test recipients too, before its key is read: no
 * credit charged, no per-key hit counted, nothing stored. Sends come back
 * once the deliveries drain, and a reload moves the ceiling.
 */
import { expect, test } from 'bun:test'
import { resolveConfig } from '../../src/config/load.ts'
import { QUEUED_EVERY_MS } from '../../src/events/queued.ts'
import { afterTest } from '../kit/cleanup.ts'
import { harnessPerTest, type Harness, TEST } from '../kit/harness.ts'
import { waitFor } from '../kit/wait-for.ts'
import { receiverPerTest } from '../kit/webhook-receiver.ts'

const QUEUED = 'Too many webhook events waiting for delivery. Please try again in 5 seconds.'
const big = 1_000_000
const limits = { recipient_per_minute: big, recipient_per_hour: big, recipient_per_day: big }
const start = harnessPerTest({ credits: 100, config: { events: { endpoint_max_in_flight: 2 } } })
const receiver = receiverPerTest()

const count = async (h: Harness, sql: string) => Number((await h.sql(sql))[0]!.n)
const verifications = (h: Harness) => count(h, 'SELECT count(*) AS n FROM verifications')
const pending = (h: Harness) => count(h, "SELECT count(*) AS n FROM event_deliveries WHERE status = 'pending'")

/** `n` sends of the default account to numbers of their own, from `from`: a `verification.sent` event each. */
async function sends(h: Harness, n: number, from: number): Promise<void> {
  for (let i = 0; i < n; i++) expect((await h.send({ channel: 'sms', recipient: `+1415555${String(from + i).padStart(4, '0')}` })).status).toBe(200)
  await h.server.storage.settled()
}

/** A server whose one endpoint holds every request until `release()`, its delivery loop running. */
async function hanging(config: Record<string, unknown>) {
  const h = await start({ config })
  const rx = receiver()
  let release!: () => void
  rx.hold = new Promise((r) => (release = r))
  afterTest(() => release())
  await h.server.webhooks.add({ url: rx.url })
  await h.server.events.scanExpired(true)
  return { h, rx, release }
}

/** Starts the delivery loop; after the test, the endpoint answers and the loop stops. */
function runLoop(h: Harness, release: () => void): void {
  h.server.events.start()
  afterTest(() => {
    release()
    return h.server.events.stop()
  })
}

/** What a send with a wrong key answers: the ceiling's 503 comes before the key is read, a 401 otherwise; it counts toward nothing. */
async function probe(h: Harness): Promise<number> {
  return (await h.send({ channel: 'sms', recipient: '+14155550999' }, 'otpd_live_wrong')).status
}

test('past the ceiling: 503 with Retry-After at once, test recipients too; nothing charged, counted or stored; sends resume once deliveries drain', async () => {
  // The per-key limit (10 a minute) would refuse the last send below if a refused one counted.
  const { h, rx, release } = await hanging({ limits: { ...limits, key_requests_per_minute: 10 }, events: { max_queued: 5, endpoint_max_in_flight: 2 } })
  const test = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  await sends(h, 5, 0)
  runLoop(h, release)
  await waitFor(() => rx.received.length === 2, { what: 'the endpoint to hold its 2 slots' })
  expect(await pending(h)).toBe(6)
  await waitFor(async () => (await probe(h)) === 503, { what: 'the pass to count the outbox' })
  const balance = (await h.server.admin.balance()).balance
  const stored = await verifications(h)
  for (const recipient of ['+14155550100', TEST.PHONE_SUCCESS]) {
    const started = performance.now()
    const r = await h.send({ channel: 'sms', recipient })
    expect(performance.now() - started).toBeLessThan(200)
    expect([r.status, r.json]).toEqual([503, { error: QUEUED, retry_after: 5, request_id: r.headers.get('x-request-id') }])
    expect(r.headers.get('retry-after')).toBe('5')
  }
  expect((await h.server.admin.balance()).balance).toBe(balance)
  expect(await verifications(h)).toBe(stored)
  expect(await pending(h)).toBe(6)
  // Refused with an Idempotency-Key: nothing is stored for it, so the same request goes through once the outbox drains.
  const keyed = { path: '/api/v1/send', body: { channel: 'sms', recipient: '+14155550200' }, opts: { headers: { 'idempotency-key': 'ceiling-1' } } }
  expect((await h.call(keyed.path, keyed.body, keyed.opts)).status).toBe(503)
  // Verify is never refused (its event joins the outbox past the ceiling).
  const v = await h.verify({ verification_id: test.json.verification_id, code: '123456' })
  expect([v.status, v.json.verified]).toEqual([200, true])
  const refused = h.logs.map((l) => JSON.parse(l)).filter((l) => l.outcome === 'events_queued')
  expect(refused.map((l) => [l.level, l.status])).toEqual([['warn', 503]])
  expect(await pending(h)).toBe(7)
  // The endpoint answers: the outbox drains, and the next count (a second later) lets sends in.
  release()
  await waitFor(async () => (await pending(h)) === 0, { what: 'the deliveries to drain' })
  h.clock.advance(QUEUED_EVERY_MS)
  await waitFor(async () => (await probe(h)) === 401, { what: 'the pass to count the drained outbox' })
  const again = await h.call(keyed.path, keyed.body, keyed.opts)
  expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([200, null])
  await sends(h, 2, 10)
  expect((await h.server.admin.balance()).balance).toBe(balance - 3)
}, 15_000)

test('a reload moves the ceiling: lowered, sends are refused from the next count; raised, they pass at once', async () => {
  const { h, release } = await hanging({ limits, events: { endpoint_max_in_flight: 2 } })
  runLoop(h, release)
  await sends(h, 4, 0)
  h.clock.advance(QUEUED_EVERY_MS)
  const lower = resolveConfig({ ...h.server.config, events: { ...h.server.config.events, max_queued: 3 } })
  h.server.reload(lower)
  await waitFor(async () => (await probe(h)) === 503, { what: 'the lowered ceiling to refuse' })
  expect((await h.send({ channel: 'sms', recipient: '+14155550100' })).json.error).toBe(QUEUED)
  h.server.reload(resolveConfig({ ...lower, events: { ...lower.events, max_queued: 100 } }))
  expect((await h.send({ channel: 'sms', recipient: '+14155550100' })).status).toBe(200)
}, 15_000)

test('a second server on the same database counts the shared outbox at its own passes, and refuses too', async () => {
  const config = { limits, events: { max_queued: 3, endpoint_max_in_flight: 2 } }
  const { h, release } = await hanging(config)
  const other = await start({ dir: h.dir, key: h.key, clock: h.clock, databaseUrl: h.databaseUrl, credits: undefined, config })
  // Both loops run, each counting the shared outbox at its own passes.
  runLoop(h, release)
  runLoop(other, release)
  await sends(h, 4, 0)
  h.clock.advance(QUEUED_EVERY_MS)
  await waitFor(async () => (await probe(other)) === 503, { what: 'the second server to count the shared outbox' })
  const r = await other.send({ channel: 'email', recipient: TEST.EMAIL_SUCCESS })
  expect([r.status, r.json.error]).toEqual([503, QUEUED])
  release()
  await waitFor(async () => (await pending(h)) === 0, { what: 'the deliveries to drain' })
  h.clock.advance(QUEUED_EVERY_MS)
  await waitFor(async () => (await probe(other)) === 401, { what: 'the second server to count the drained outbox' })
}, 15_000)
