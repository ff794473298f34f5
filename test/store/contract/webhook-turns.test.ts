/**
 * WebhookRepo contract, the claim's fairness (docs/events.md#fair-turns-and-slow-endpoints):
 * accounts take turns, then each account's endpoints, the longest waiting
 * first; no endpoint gets more than its limit leased, counting every owner's
 * leases, also when claims run at once; an endpoint that keeps failing is
 * paused on its own, then probed one delivery at a time. The same on every engine.
 */
import { expect, test } from 'bun:test'
import { FIRST_PAUSE_MS, MAX_PAUSE_MS, PAUSE_AFTER_FAILURES } from '../../../src/otp/endpoint-turns.ts'
import type { DeliveryResult, DueDelivery, Repos } from '../../../src/otp/ports/index.ts'
import { accountWithKey, DEFAULT_ACCOUNT, hash, MINUTE, T0, useEngine } from './data.ts'

const engine = useEngine()
const storage = () => engine().storage

const addEndpoint = (r: Repos, accountId: number) =>
  r.webhooks.insertEndpoint({ accountId, url: `https://hooks.example/${accountId}`, events: null, secret: hash('s1'), at: T0 })

/** `n` account-wide events of `accountId`, at `from`, `from` + 1 ms...: one delivery per endpoint of the account each. */
async function addEvents(accountId: number, n: number, from: number): Promise<void> {
  await storage().write(async (r) => {
    for (let i = 0; i < n; i++) await r.events.add({ type: 'send.blocked', accountId, at: from + i, verification: null, status: null, extra: {} })
  })
}

const claim = (now: number, limit: number, perEndpoint: number, owner = 'n') =>
  storage().write((r) => r.webhooks.claim(now, now + MINUTE, owner, limit, perEndpoint))
const hasDue = (now: number, perEndpoint: number) => storage().read((r) => r.webhooks.hasDue(now, perEndpoint))
/** Each claimed delivery as [endpoint, when its event happened]. */
const shown = (due: DueDelivery[]) => due.map((d) => [d.endpointId, d.firstAt])

test('a claim gives accounts turns, then each account’s endpoints, the longest waiting first, and never an endpoint more than its limit', async () => {
  const { accountId: b } = await accountWithKey(storage(), 'acme')
  const [a1, a2, b1] = await storage().write(async (r) => [
    await addEndpoint(r, DEFAULT_ACCOUNT),
    await addEndpoint(r, DEFAULT_ACCOUNT),
    await addEndpoint(r, b),
  ])
  // The default account's backlog came first; acme's 3 events came after it.
  await addEvents(DEFAULT_ACCOUNT, 10, T0)
  await addEvents(b, 3, T0 + 5)
  const now = T0 + 100
  expect(shown(await claim(now, 6, 10))).toEqual([
    [a1, T0],
    [b1, T0 + 5],
    [a2, T0],
    [b1, T0 + 6],
    [a1, T0 + 1],
    [b1, T0 + 7],
  ])
  // Another owner, limit 2 per endpoint: a1 has two leased, a2 one, b1 three.
  expect(shown(await claim(now, 100, 2, 'm'))).toEqual([[a2, T0 + 1]])
  expect(await hasDue(now, 2)).toBe(false)
  expect(await hasDue(now, 3)).toBe(true)
  expect(await claim(now, 100, 2, 'o')).toEqual([])
  // The leases over, the limit is free again.
  const later = now + MINUTE
  expect((await claim(later, 100, 2, 'o')).map((d) => d.endpointId).sort()).toEqual([a1!, a1!, a2!, a2!, b1!, b1!].sort())
})

test('claims at once leave an endpoint exactly its limit leased (PostgreSQL: one claim at a time, across connections)', async () => {
  const ep = await storage().write((r) => addEndpoint(r, DEFAULT_ACCOUNT))
  await addEvents(DEFAULT_ACCOUNT, 40, T0)
  const claims = await Promise.all(Array.from({ length: 12 }, (_, i) => claim(T0 + 100, 4, 3, `node-${i}`)))
  const leased = claims.flat()
  expect(leased).toHaveLength(3)
  expect(new Set(leased.map((d) => d.eventSeq)).size).toBe(3)
  const rows = await engine().sql('SELECT count(*) AS n FROM event_deliveries WHERE endpoint_id = $1 AND lease_owner IS NOT NULL', [ep])
  expect(Number(rows[0]!.n)).toBe(3)
})

/** The endpoint's run of failures and its pause, as stored. */
async function pauseOf(id: number): Promise<[number, number | null, number]> {
  const [row] = await engine().sql('SELECT failures, paused_until, pause_ms FROM webhook_endpoints WHERE id = $1', [id])
  return [Number(row!.failures), row!.paused_until === null ? null : Number(row!.paused_until), Number(row!.pause_ms)]
}

test('an endpoint that fails 5 tries in a row is paused; then one try at a time, each failure doubling the pause up to 10 min; a success ends it', async () => {
  const ep = await storage().write((r) => addEndpoint(r, DEFAULT_ACCOUNT))
  await addEvents(DEFAULT_ACCOUNT, 20, T0)
  const failed = (d: DueDelivery, startedAt: number, at: number): DeliveryResult => ({
    eventSeq: d.eventSeq,
    endpointId: d.endpointId,
    owner: 'n',
    status: 'pending',
    attempts: 1,
    nextAt: at + 30_000,
    error: 'HTTP 500',
    at,
    startedAt,
  })
  const finish = (r: DeliveryResult) => storage().write((x) => x.webhooks.finish(r))
  // Six tries in flight at once, begun at T0 + 100; the 5th failure pauses, the 6th (begun before the pause) does not lengthen it.
  const first = await claim(T0 + 100, 6, 100)
  for (const [i, d] of first.slice(0, PAUSE_AFTER_FAILURES - 1).entries()) expect(await finish(failed(d, T0 + 100, T0 + 200 + i))).toBe(true)
  expect(await pauseOf(ep)).toEqual([4, null, 0])
  expect(await finish(failed(first[4]!, T0 + 100, T0 + 300))).toBe(true)
  expect(await pauseOf(ep)).toEqual([5, T0 + 300 + FIRST_PAUSE_MS, FIRST_PAUSE_MS])
  await finish(failed(first[5]!, T0 + 100, T0 + 400))
  expect(await pauseOf(ep)).toEqual([6, T0 + 300 + FIRST_PAUSE_MS, FIRST_PAUSE_MS])
  // Paused: nothing is claimed though 14 deliveries are due.
  expect(await hasDue(T0 + 300 + FIRST_PAUSE_MS - 1, 100)).toBe(false)
  expect(await claim(T0 + 300 + FIRST_PAUSE_MS - 1, 100, 100)).toEqual([])
  // Then one at a time; each failed probe doubles the pause, up to MAX_PAUSE_MS.
  let now = T0 + 300 + FIRST_PAUSE_MS
  const pauses: number[] = []
  for (let i = 0; i < 7; i++) {
    const probe = await claim(now, 100, 100)
    expect(probe).toHaveLength(1)
    expect(await claim(now, 100, 100, 'm')).toEqual([])
    await finish({ ...failed(probe[0]!, now, now + 10), owner: 'n' })
    const [, until, pause] = await pauseOf(ep)
    expect(until).toBe(now + 10 + pause)
    pauses.push(pause)
    now = until!
  }
  expect(pauses).toEqual([2, 4, 8, 16, 20, 20, 20].map((k) => Math.min(k * FIRST_PAUSE_MS, MAX_PAUSE_MS)))
  // A success: the endpoint has its slots back at once.
  const probe = await claim(now, 100, 100)
  expect(probe).toHaveLength(1)
  expect(await finish({ ...failed(probe[0]!, now, now + 10), status: 'delivered', error: null })).toBe(true)
  expect(await pauseOf(ep)).toEqual([0, null, 0])
  // Every other delivery (the failed ones due again by now).
  expect(await claim(now + 10, 100, 100)).toHaveLength(20 - 1)
})

test('a replay ends the pause of the endpoints it sends to', async () => {
  const ep = await storage().write((r) => addEndpoint(r, DEFAULT_ACCOUNT))
  await addEvents(DEFAULT_ACCOUNT, PAUSE_AFTER_FAILURES, T0)
  const due = await claim(T0 + 100, 100, 100)
  for (const d of due) {
    const r = { eventSeq: d.eventSeq, endpointId: ep, owner: 'n', attempts: 1, nextAt: T0 + 200, at: T0 + 200, startedAt: T0 + 100 }
    await storage().write((x) => x.webhooks.finish({ ...r, status: 'failed', error: 'HTTP 410' }))
  }
  expect((await pauseOf(ep))[1]).toBe(T0 + 200 + FIRST_PAUSE_MS)
  expect(await storage().write((r) => r.webhooks.rearm(due[0]!.eventSeq, T0 + 300, true))).toBe(1)
  expect(await pauseOf(ep)).toEqual([0, null, 0])
  expect(shown(await claim(T0 + 300, 100, 100))).toEqual([[ep, T0 + 300]])
})
