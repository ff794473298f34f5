/**
 * What counts as a delivered event (docs/api.md#events): any 2xx and nothing
 * else (a 3xx is not followed), no answer within 10 s is a failed try, each
 * try retried with the same webhook-id and a fresh webhook-timestamp; and an
 * endpoint gets its own account's events only.
 */
import { describe, expect, test } from 'bun:test'
import { deliverEvents as deliver } from '../kit/events.ts'
import { harnessPerTest, HOUR, MINUTE, TEST, type Harness } from '../kit/harness.ts'
import { RECORDING_RECEIPTS } from '../kit/receipts.ts'
import { receiverPerTest, signatureValid } from '../kit/webhook-receiver.ts'
import { afterTest } from '../kit/cleanup.ts'

const start = harnessPerTest({ credits: 20, ...RECORDING_RECEIPTS })
const receiver = receiverPerTest()

/** A server whose first expiry scan has run: it starts the cursor, as serve does at start. */
async function harness(): Promise<Harness> {
  const h = await start()
  await h.server.events.scanExpired(true)
  return h
}

describe('delivery', () => {
  /** A receiver that answers the given statuses in turn, with no body (so 204 and 304 are real). */
  function statusReceiver(statuses: number[]) {
    const seen: { id: string; timestamp: string; signature: string; body: string }[] = []
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch(req) {
        seen.push({
          id: req.headers.get('webhook-id')!,
          timestamp: req.headers.get('webhook-timestamp')!,
          signature: req.headers.get('webhook-signature')!,
          body: await req.text(),
        })
        const status = statuses.shift() ?? 200
        return status === 302 ? new Response(null, { status, headers: { location: 'http://127.0.0.1:9/elsewhere' } }) : new Response(null, { status })
      },
    })
    afterTest(() => void server.stop(true))
    return { url: `http://127.0.0.1:${server.port}/hook`, seen }
  }

  test('any 2xx is success (200, 201, 202, 204, 299)', async () => {
    const statuses = [200, 201, 202, 204, 299]
    const h = await harness()
    const rx = statusReceiver([...statuses])
    await h.server.webhooks.add({ url: rx.url })
    // One event at a time, each answered with the next status.
    for (const [i] of statuses.entries()) {
      expect((await h.send({ channel: 'sms', recipient: `+1415555020${i}` })).status).toBe(200)
      expect(await deliver(h)).toBe(1)
    }
    expect(rx.seen).toHaveLength(statuses.length)
    expect((await h.server.webhooks.events({})).map((e) => [e.status, e.attempts])).toEqual(statuses.map(() => ['delivered', 1]))
  })

  test('anything else is a failed try, retried with the same webhook-id and a fresh timestamp: a 3xx (not followed), a 4xx, a 5xx', async () => {
    const h = await harness()
    const rx = statusReceiver([302, 304, 410, 500])
    const endpoint = await h.server.webhooks.add({ url: rx.url })
    await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
    const errors: (string | null)[] = []
    for (let i = 0; i < 5; i++) {
      expect(await deliver(h)).toBe(1)
      errors.push((await h.server.webhooks.events({}))[0]!.lastError)
      h.clock.advance(2 * HOUR)
    }
    expect(errors).toEqual(['HTTP 302', 'HTTP 304', 'HTTP 410', 'HTTP 500', null])
    expect(rx.seen).toHaveLength(5)
    expect(new Set(rx.seen.map((s) => s.id)).size).toBe(1)
    // webhook-timestamp is the unix time (in seconds) of each try, and each signature is valid for it.
    const t0 = Date.UTC(2026, 0, 1, 12, 0, 0) / 1000
    expect(rx.seen.map((s) => Number(s.timestamp) - t0)).toEqual([0, 7200, 14400, 21600, 28800])
    for (const s of rx.seen) expect(await signatureValid(endpoint.secret, s, s.signature)).toBe(true)
    expect((await h.server.webhooks.events({}))[0]!.status).toBe('delivered')
  })

  test('no answer within 10 s is a failed try, retried later with the same webhook-id', async () => {
    const h = await harness()
    const rx = receiver()
    let release!: () => void
    rx.hold = new Promise((r) => (release = r))
    await h.server.webhooks.add({ url: rx.url })
    await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
    const started = Date.now()
    expect(await deliver(h)).toBe(1)
    const took = Date.now() - started
    release()
    expect(took).toBeGreaterThanOrEqual(9_900)
    expect(took).toBeLessThan(14_000)
    const [e] = await h.server.webhooks.events({})
    expect([e!.status, e!.attempts, e!.lastError]).toEqual(['pending', 1, 'no answer within 10 s'])
    rx.hold = null
    h.clock.advance(MINUTE)
    expect(await deliver(h)).toBe(1)
    expect(rx.received.map((r) => r.id)).toEqual([e!.id, e!.id])
    expect((await h.server.webhooks.events({}))[0]!.status).toBe('delivered')
  }, 30_000)
})

describe('accounts', () => {
  test("an endpoint gets its own account's events only, and the body names that account", async () => {
    const h = await harness()
    await h.server.admin.createAccount('acme')
    const acmeKey = (await h.server.admin.createKey({ account: 'acme' })).key
    const mine = receiver()
    const theirs = receiver()
    await h.server.webhooks.add({ url: mine.url })
    await h.server.webhooks.add({ url: theirs.url, account: 'acme' })
    const a = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
    const b = await h.send({ channel: 'email', recipient: TEST.EMAIL_SUCCESS }, acmeKey)
    await deliver(h)
    expect(mine.received.map((r) => [r.json.account, r.json.data.verification_id])).toEqual([['default', a.json.verification_id]])
    expect(theirs.received.map((r) => [r.json.account, r.json.data.verification_id, r.json.data.test])).toEqual([['acme', b.json.verification_id, true]])
  })
})
