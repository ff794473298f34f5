/**
 * Fair turns and slow endpoints (docs/events.md#fair-turns-and-slow-endpoints),
 * against real HTTP receivers on loopback: an endpoint that never answers
 * holds its own slots only, and another account's events go on at once; an
 * endpoint's limit holds over two servers delivering from one database; an
 * endpoint that keeps failing pauses on its own, then is probed one delivery
 * at a time, while other endpoints are served.
 */
import { expect, test } from 'bun:test'
import { resolveConfig } from '../../src/app/load-config.ts'
import { afterTest } from '../kit/cleanup.ts'
import { deliverEvents } from '../kit/events.ts'
import { harnessPerTest, type Harness, TEST } from '../kit/harness.ts'
import { waitFor } from '../kit/wait-for.ts'
import { receiverPerTest } from '../kit/webhook-receiver.ts'

const big = 1_000_000
const limits = { recipient_per_minute: big, recipient_per_hour: big, recipient_per_day: big }
const start = harnessPerTest({ credits: 1000, config: { limits, events: { max_in_flight: 16, endpoint_max_in_flight: 4 } } })
const receiver = receiverPerTest()

/** A second account, `acme`, with its own key: its sends go to a test recipient (no credit). */
async function acme(h: Harness): Promise<() => Promise<void>> {
  await h.server.admin.createAccount('acme')
  const key = (await h.server.admin.createKey({ account: 'acme' })).key
  return async () => {
    expect((await h.send({ channel: 'email', recipient: TEST.EMAIL_SUCCESS }, key)).status).toBe(200)
    await h.server.storage.settled()
  }
}

/** `n` sends of the default account to numbers of their own (a `verification.sent` each), from `from`. */
async function sends(h: Harness, n: number, from: number): Promise<void> {
  for (let i = 0; i < n; i++) expect((await h.send({ channel: 'sms', recipient: `+1415555${String(from + i).padStart(4, '0')}` })).status).toBe(200)
  await h.server.storage.settled()
}

test("while one account's endpoint never answers, another account's events arrive within 1 s each (the loop as serve runs it)", async () => {
  const h = await start()
  const hanging = receiver()
  let release!: () => void
  hanging.hold = new Promise((r) => (release = r))
  afterTest(() => release())
  const fine = receiver()
  const acmeSend = await acme(h)
  await h.server.webhooks.add({ url: hanging.url })
  await h.server.webhooks.add({ url: fine.url, account: 'acme' })
  await h.server.events.scanExpired(true)
  h.server.events.start()
  afterTest(() => h.server.events.stop())
  await sends(h, 30, 0)
  await waitFor(() => hanging.received.length === 4, { what: 'the hanging endpoint to hold its 4 slots' })
  const waits: number[] = []
  for (let i = 0; i < 5; i++) {
    // Meanwhile the hanging account keeps emitting.
    await sends(h, 5, 100 + 5 * i)
    const sent = performance.now()
    await acmeSend()
    await fine.arrival(i + 1)
    waits.push(performance.now() - sent)
  }
  expect(Math.max(...waits)).toBeLessThan(1_000)
  expect(fine.received.map((r) => r.json.account)).toEqual(Array(5).fill('acme'))
  // The hanging endpoint never had more than its limit of tries, though 55 of its events are due.
  expect(hanging.received).toHaveLength(4)
  release()
  await h.server.events.stop()
}, 20_000)

/** A receiver that holds each request `ms` ms, counting how many it holds at once (the most, since `most` was last set). */
function countingReceiver(ms: number) {
  const seen = { now: 0, most: 0, ids: [] as string[], paths: new Set<string>() }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      seen.ids.push(req.headers.get('webhook-id') ?? '')
      seen.paths.add(new URL(req.url).pathname)
      seen.most = Math.max(seen.most, ++seen.now)
      await Bun.sleep(ms)
      seen.now--
      return new Response(null, { status: 204 })
    },
  })
  afterTest(() => void server.stop(true))
  return { url: `http://127.0.0.1:${server.port}/hook`, seen }
}

test("an endpoint's limit holds over two servers delivering from one database at once, and each event goes once", async () => {
  const h = await start()
  const other = await start({ dir: h.dir, key: h.key, clock: h.clock, databaseUrl: h.databaseUrl, credits: undefined })
  const rx = countingReceiver(50)
  await h.server.webhooks.add({ url: rx.url })
  await h.server.events.scanExpired(true)
  await sends(h, 24, 0)
  const tried = await Promise.all([deliverEvents(h), deliverEvents(other), deliverEvents(h), deliverEvents(other)])
  expect(tried.reduce((a, b) => a + b)).toBe(24)
  expect(rx.seen.ids).toHaveLength(24)
  expect(new Set(rx.seen.ids).size).toBe(24)
  expect(rx.seen.most).toBe(4)
})

test('an endpoint that keeps failing is paused on its own, then probed one delivery at a time; other endpoints are served meanwhile', async () => {
  const h = await start()
  const failing = receiver()
  const fine = receiver()
  const acmeSend = await acme(h)
  await h.server.webhooks.add({ url: failing.url })
  await h.server.webhooks.add({ url: fine.url, account: 'acme' })
  await h.server.events.scanExpired(true)
  failing.statuses.push(...Array(9).fill(500))
  // 4 at a time (the endpoint's limit): the 5th failure in a row pauses it for 30 s.
  await sends(h, 8, 0)
  expect(await deliverEvents(h)).toBe(8)
  expect(failing.received).toHaveLength(8)
  await sends(h, 3, 10)
  await acmeSend()
  await acmeSend()
  expect(await deliverEvents(h)).toBe(2)
  expect(fine.received).toHaveLength(2)
  expect(failing.received).toHaveLength(8)
  expect(await h.server.metrics.render()).toContain('otpd_webhook_endpoints_failing 1\n')
  // The pause over: one probe, which fails and pauses it for 60 s.
  h.clock.advance(30_000)
  expect(await deliverEvents(h)).toBe(1)
  expect(failing.received).toHaveLength(9)
  h.clock.advance(59_000)
  expect(await deliverEvents(h)).toBe(0)
  // The endpoint is fixed: the next probe succeeds and every delivery due goes, in the same pass.
  h.clock.advance(1_000)
  expect(await deliverEvents(h)).toBe(11)
  expect(new Set(failing.received.map((r) => r.id)).size).toBe(11)
  const events = await h.server.webhooks.events({ limit: 100 })
  expect(events.every((e) => e.status === 'delivered')).toBe(true)
  expect(await h.server.metrics.render()).toContain('otpd_webhook_endpoints_failing 0\n')
})

test("the process's slots bound every endpoint together, and a reload's limits apply to the next pass", async () => {
  const events = { max_in_flight: 5, endpoint_max_in_flight: 4 }
  const h = await start({ config: { limits, events } })
  const rx = countingReceiver(50)
  for (const i of [1, 2, 3]) await h.server.webhooks.add({ url: `${rx.url}/${i}` })
  await h.server.events.scanExpired(true)
  await sends(h, 8, 0)
  expect(await deliverEvents(h)).toBe(24)
  expect(rx.seen.paths.size).toBe(3)
  expect(rx.seen.most).toBe(5)
  const next = { limits, fraud: { mode: 'off' }, events: { max_in_flight: 100, endpoint_max_in_flight: 1 } }
  const db = { path: h.dbPath, ...(h.databaseUrl ? { url: h.databaseUrl } : {}) }
  expect(h.server.reload(resolveConfig({ ...next, database: db, server: h.databaseUrl ? { secret: h.server.config.server.secret } : {} }))).toEqual([])
  rx.seen.most = 0
  await sends(h, 8, 100)
  expect(await deliverEvents(h)).toBe(24)
  expect(rx.seen.most).toBe(3)
  // Each of the 16 events once to each of the 3 endpoints.
  expect(rx.seen.ids).toHaveLength(48)
  expect(new Set(rx.seen.ids).size).toBe(16)
})
