/**
 * WebhookRepo contract: endpoints, the event log as `otpd events` shows it,
 * and the delivery queue the dispatcher leases from, the same on every engine.
 */
import { describe, expect, test } from 'bun:test'
import type { EventType, Repos } from '../../../src/otp/ports/index.ts'
import { accountWithKey, DEFAULT_ACCOUNT, defaultKey, hash, insertVerification, MINUTE, T0, useEngine } from './data.ts'

const engine = useEngine()
const storage = () => engine().storage

const addEndpoint = (r: Repos, events: EventType[] | null, accountId = DEFAULT_ACCOUNT) =>
  r.webhooks.insertEndpoint({ accountId, url: `https://hooks.example/${accountId}`, events, secret: hash('s1'), at: T0 })

let keys = 0
/** Events of one new verification, of these types in this order, one ms apart from T0: their numbers, oldest first. */
async function addEvents(types: EventType[]): Promise<number[]> {
  const key = await defaultKey(storage(), `pk_${++keys}`)
  const v = await insertVerification(storage(), key)
  await storage().write(async (r) => {
    for (const [i, type] of types.entries()) await r.events.add({ type, accountId: v.accountId, at: T0 + i, verification: v, status: 'pending', extra: {} })
  })
  const rows = await storage().read((r) => r.webhooks.listEvents({ limit: 1000 }))
  return rows.slice(-types.length).map((e) => e.seq)
}

describe('endpoints', () => {
  test('read back with their account, subscribed types and secrets; listed by id, per account', async () => {
    const { accountId } = await accountWithKey(storage(), 'acme')
    const [a, b] = await storage().write(async (r) => [await addEndpoint(r, null), await addEndpoint(r, ['verification.sent', 'send.blocked'], accountId)])
    const found = await storage().read((r) => r.webhooks.findEndpoint(b!))
    expect(found).toEqual({
      id: b!,
      accountId,
      account: 'acme',
      url: `https://hooks.example/${accountId}`,
      events: ['verification.sent', 'send.blocked'],
      secret: hash('s1'),
      prevSecret: null,
      rotatedAt: null,
      createdAt: T0,
    })
    expect((await storage().read((r) => r.webhooks.listEndpoints())).map((e) => [e.id, e.events])).toEqual([
      [a!, null],
      [b!, ['verification.sent', 'send.blocked']],
    ])
    expect((await storage().read((r) => r.webhooks.listEndpoints(accountId))).map((e) => e.id)).toEqual([b!])
    expect(await storage().read((r) => r.webhooks.findEndpoint(b! + 100))).toBeUndefined()
  })

  test('setSecret keeps the previous secret and when it was rotated', async () => {
    const id = await storage().write((r) => addEndpoint(r, null))
    await storage().write((r) => r.webhooks.setSecret(id, hash('s2'), hash('s1'), T0 + 5))
    expect(await storage().read((r) => r.webhooks.findEndpoint(id))).toMatchObject({ secret: hash('s2'), prevSecret: hash('s1'), rotatedAt: T0 + 5 })
  })

  test('deleteEndpoint removes it and the deliveries still due to it', async () => {
    const [a, b] = await storage().write(async (r) => [await addEndpoint(r, null), await addEndpoint(r, null)])
    await addEvents(['verification.sent'])
    expect(await storage().read((r) => r.webhooks.outboxDepth())).toBe(2)
    await storage().write((r) => r.webhooks.deleteEndpoint(a!))
    expect(await storage().read((r) => r.webhooks.findEndpoint(a!))).toBeUndefined()
    expect(await storage().read((r) => r.webhooks.outboxDepth())).toBe(1)
    expect((await engine().sql('SELECT endpoint_id FROM event_deliveries')).map((d) => Number(d.endpoint_id))).toEqual([b!])
  })
})

describe('the delivery queue', () => {
  test('claim leases due deliveries to one owner; they are not due again until the lease ends', async () => {
    const ep = await storage().write((r) => addEndpoint(r, null))
    const [first, second] = await addEvents(['verification.sent', 'verification.approved'])
    expect(await storage().read((r) => r.webhooks.hasDue(T0 - 1))).toBe(false)
    expect(await storage().read((r) => r.webhooks.hasDue(T0 + 1))).toBe(true)
    const claimed = await storage().write((r) => r.webhooks.claim(T0 + 1, T0 + MINUTE, 'node-a', 10))
    expect(claimed.map((d) => [d.eventSeq, d.endpointId, d.attempts, d.firstAt, d.url, d.secret])).toEqual([
      [first!, ep, 0, T0, `https://hooks.example/${DEFAULT_ACCOUNT}`, hash('s1')],
      [second!, ep, 0, T0 + 1, `https://hooks.example/${DEFAULT_ACCOUNT}`, hash('s1')],
    ])
    expect(JSON.parse(claimed[0]!.body).id).toBe(claimed[0]!.eventId)
    expect(await storage().read((r) => r.webhooks.hasDue(T0 + 2))).toBe(false)
    expect(await storage().write((r) => r.webhooks.claim(T0 + 2, T0 + MINUTE, 'node-b', 10))).toEqual([])
    // The lease over, another owner takes them.
    expect((await storage().write((r) => r.webhooks.claim(T0 + MINUTE, T0 + 2 * MINUTE, 'node-b', 1))).map((d) => d.eventSeq)).toEqual([first!])
  })

  test('finish records an outcome only while its owner holds the lease of a pending delivery', async () => {
    const ep = await storage().write((r) => addEndpoint(r, null))
    const [seq] = await addEvents(['verification.sent'])
    await storage().write((r) => r.webhooks.claim(T0, T0 + MINUTE, 'node-a', 10))
    const result = { eventSeq: seq!, endpointId: ep, status: 'pending' as const, attempts: 1, nextAt: T0 + 30_000, error: 'HTTP 500', at: T0 + 1 }
    expect(await storage().write((r) => r.webhooks.finish({ ...result, owner: 'node-b' }))).toBe(false)
    expect(await storage().write((r) => r.webhooks.finish({ ...result, owner: 'node-a' }))).toBe(true)
    // Its lease is gone with the outcome: the same owner cannot record twice.
    expect(await storage().write((r) => r.webhooks.finish({ ...result, owner: 'node-a' }))).toBe(false)
    expect(await storage().read((r) => r.webhooks.hasDue(T0 + 29_999))).toBe(false)
    expect(await storage().read((r) => r.webhooks.hasDue(T0 + 30_000))).toBe(true)
    await storage().write((r) => r.webhooks.claim(T0 + 30_000, T0 + MINUTE, 'node-b', 10))
    expect(await storage().write((r) => r.webhooks.finish({ ...result, owner: 'node-b', status: 'delivered', attempts: 2, at: T0 + 30_001 }))).toBe(true)
    expect(await storage().write((r) => r.webhooks.finish({ ...result, owner: 'node-b', status: 'failed', attempts: 3 }))).toBe(false)
    expect(await storage().read((r) => r.webhooks.outboxDepth())).toBe(0)
  })
})

describe('the event log', () => {
  test("an event's status is derived from its deliveries: none, pending, delivered, failed", async () => {
    const none = (await addEvents(['verification.sent']))[0]!
    const ep = await storage().write((r) => addEndpoint(r, null))
    const [pending, delivered, failed] = await addEvents(['verification.sent', 'verification.approved', 'verification.locked'])
    await storage().write(async (r) => {
      await r.webhooks.claim(T0 + 10, T0 + MINUTE, 'n', 10)
      const done = { endpointId: ep, owner: 'n', attempts: 1, nextAt: T0 + 10, at: T0 + 10 }
      await r.webhooks.finish({ ...done, eventSeq: delivered!, status: 'delivered', error: null })
      await r.webhooks.finish({ ...done, eventSeq: failed!, status: 'failed', error: 'HTTP 410' })
    })
    const events = await storage().read((r) => r.webhooks.listEvents({ limit: 10 }))
    expect(events.map((e) => [e.seq, e.status, e.endpoints, e.attempts, e.lastError])).toEqual([
      [none, 'none', 0, 0, null],
      [pending!, 'pending', 1, 0, null],
      [delivered!, 'delivered', 1, 1, null],
      [failed!, 'failed', 1, 1, 'HTTP 410'],
    ])
    expect((await storage().read((r) => r.webhooks.listEvents({ status: 'failed', limit: 10 }))).map((e) => e.seq)).toEqual([failed!])
    expect((await storage().read((r) => r.webhooks.listEvents({ status: 'delivered', limit: 10 }))).map((e) => e.seq)).toEqual([delivered!])
    expect((await storage().read((r) => r.webhooks.listEvents({ status: 'pending', limit: 10 }))).map((e) => e.seq)).toEqual([pending!])
    // The newest `limit`, oldest first.
    expect((await storage().read((r) => r.webhooks.listEvents({ limit: 2 }))).map((e) => e.seq)).toEqual([delivered!, failed!])
    expect(await storage().read((r) => r.webhooks.failedEvents(10))).toEqual([failed!])
  })

  test('listEvents of one account; findEvent by the id of the event', async () => {
    const { accountId } = await accountWithKey(storage(), 'acme')
    const [seq] = await addEvents(['verification.sent'])
    await storage().write((r) => r.events.add({ type: 'send.blocked', accountId, at: T0 + 5, verification: null, status: null, extra: {} }))
    const mine = await storage().read((r) => r.webhooks.listEvents({ accountId, limit: 10 }))
    expect(mine.map((e) => [e.account, e.type, e.verificationId, e.sequence, e.occurredAt])).toEqual([['acme', 'send.blocked', null, 0, T0 + 5]])
    const all = await storage().read((r) => r.webhooks.listEvents({ limit: 10 }))
    expect(all.map((e) => e.seq)).toEqual([seq!, mine[0]!.seq])
    expect(await storage().read((r) => r.webhooks.findEvent(mine[0]!.id))).toEqual(mine[0])
    expect(await storage().read((r) => r.webhooks.findEvent(crypto.randomUUID()))).toBeUndefined()
  })

  test('listEvents of one type; a send.blocked event carries its rule, country, channel and masked recipient', async () => {
    const [sent] = await addEvents(['verification.sent', 'verification.approved'])
    const extra = { rule: 'geo', country: 'UZ', prefix: '+9989****', channel: 'sms', recipient: '+9989****0001' }
    await storage().write((r) => r.events.add({ type: 'send.blocked', accountId: DEFAULT_ACCOUNT, at: T0 + 5, verification: null, status: null, extra }))
    const blocked = await storage().read((r) => r.webhooks.listEvents({ type: 'send.blocked', limit: 10 }))
    expect(blocked.map((e) => [e.type, e.blocked])).toEqual([['send.blocked', { rule: 'geo', country: 'UZ', channel: 'sms', recipient: '+9989****0001' }]])
    const sends = await storage().read((r) => r.webhooks.listEvents({ type: 'verification.sent', limit: 10 }))
    expect(sends.map((e) => [e.seq, e.blocked])).toEqual([[sent!, null]])
    expect(await storage().read((r) => r.webhooks.listEvents({ type: 'verification.sent', status: 'failed', limit: 10 }))).toEqual([])
  })

  test('rearm: only the failed deliveries, or again to every endpoint now subscribed to the type', async () => {
    const [a, b] = await storage().write(async (r) => [await addEndpoint(r, null), await addEndpoint(r, ['verification.sent'])])
    const [seq] = await addEvents(['verification.sent'])
    await storage().write(async (r) => {
      await r.webhooks.claim(T0, T0 + MINUTE, 'n', 10)
      await r.webhooks.finish({ eventSeq: seq!, endpointId: a!, owner: 'n', status: 'failed', attempts: 5, nextAt: T0, error: 'HTTP 500', at: T0 + 1 })
      await r.webhooks.finish({ eventSeq: seq!, endpointId: b!, owner: 'n', status: 'delivered', attempts: 1, nextAt: T0, error: null, at: T0 + 1 })
    })
    expect(await storage().write((r) => r.webhooks.rearm(seq!, T0 + 100, true))).toBe(1)
    const claimed = await storage().write((r) => r.webhooks.claim(T0 + 100, T0 + MINUTE, 'n', 10))
    expect(claimed.map((d) => [d.endpointId, d.attempts, d.firstAt])).toEqual([[a!, 0, T0 + 100]])
    // A third endpoint, subscribed to another type, gets nothing; the two subscribed are pending again.
    const c = await storage().write((r) => addEndpoint(r, ['verification.approved']))
    expect(await storage().write((r) => r.webhooks.rearm(seq!, T0 + 200, false))).toBe(2)
    const due = await engine().sql("SELECT endpoint_id, attempts, first_at FROM event_deliveries WHERE status = 'pending' ORDER BY endpoint_id")
    expect(due.map((d) => [Number(d.endpoint_id), Number(d.attempts), Number(d.first_at)])).toEqual([
      [a!, 0, T0 + 200],
      [b!, 0, T0 + 200],
    ])
    expect(c).toBeGreaterThan(b!)
  })
})
