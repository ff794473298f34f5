/**
 * EventOutbox contract: an event and its deliveries are written in the
 * transaction of the change they report, one per subscribed endpoint; the
 * expiry scan finds what expired unreported, and keeps its cursor. The same
 * on every engine.
 */
import { describe, expect, test } from 'bun:test'
import type { EventType, NewEvent, Repos } from '../../../src/otp/ports/index.ts'
import type { Verification } from '../../../src/otp/types.ts'
import { accountWithKey, DEFAULT_ACCOUNT, defaultKey, hash, insertVerification, MINUTE, T0, useEngine } from './data.ts'

const engine = useEngine()
const storage = () => engine().storage

const event = (type: EventType, v: Verification | null, at = T0, accountId = v?.accountId ?? DEFAULT_ACCOUNT): NewEvent => ({
  type,
  accountId,
  at,
  verification: v,
  status: v === null ? null : 'pending',
  extra: {},
})

const endpoint = (r: Repos, events: EventType[] | null, accountId = DEFAULT_ACCOUNT) =>
  r.webhooks.insertEndpoint({ accountId, url: `https://hooks.example/${events?.join('+') ?? 'all'}`, events, secret: hash('secret'), at: T0 })

/** Each event of the database, oldest first, with the endpoints it is due to. */
async function stored(): Promise<{ type: string; sequence: number; body: Record<string, unknown>; endpoints: number[] }[]> {
  const events = await engine().sql('SELECT seq, type, sequence, body FROM events ORDER BY seq')
  const out = []
  for (const e of events) {
    const due = await engine().sql("SELECT endpoint_id FROM event_deliveries WHERE event_seq = $1 AND status = 'pending' ORDER BY endpoint_id", [e.seq])
    out.push({ type: String(e.type), sequence: Number(e.sequence), body: JSON.parse(String(e.body)), endpoints: due.map((d) => Number(d.endpoint_id)) })
  }
  return out
}

describe('add', () => {
  test("numbers a verification's events 1, 2, 3... and writes the body with the account's name", async () => {
    const key = await defaultKey(storage())
    const v = await insertVerification(storage(), key)
    const w = await insertVerification(storage(), key)
    await storage().write((r) => r.events.add(event('verification.sent', v)))
    await storage().write(async (r) => {
      await r.events.add(event('verification.attempt_failed', v, T0 + 1))
      await r.events.add(event('verification.sent', w, T0 + 1))
      await r.events.add(event('verification.attempt_failed', v, T0 + 2))
    })
    await storage().write((r) => r.events.add(event('verification.approved', v, T0 + 3)))
    const rows = await stored()
    expect(rows.map((e) => [e.type, e.sequence])).toEqual([
      ['verification.sent', 1],
      ['verification.attempt_failed', 2],
      ['verification.sent', 1],
      ['verification.attempt_failed', 3],
      ['verification.approved', 4],
    ])
    expect(rows[0]!.body).toMatchObject({ type: 'verification.sent', account: 'default', data: { verification_id: v.id, sequence: 1, status: 'pending' } })
    expect(rows[0]!.body.occurred_at).toBe(new Date(T0).toISOString())
    const ids = rows.map((e) => e.body.id)
    expect(new Set(ids).size).toBe(5)
  })

  test('an event of no verification (send.blocked) has sequence 0', async () => {
    await storage().write((r) => r.events.add(event('send.blocked', null)))
    expect((await stored()).map((e) => [e.type, e.sequence, e.body.account])).toEqual([['send.blocked', 0, 'default']])
  })

  test('writes one pending delivery per endpoint of the account subscribed to the type', async () => {
    const { accountId } = await accountWithKey(storage(), 'acme')
    const [all, sent, approved, elsewhere] = await storage().write(async (r) => [
      await endpoint(r, null),
      await endpoint(r, ['verification.sent', 'verification.expired']),
      await endpoint(r, ['verification.approved']),
      await endpoint(r, null, accountId),
    ])
    const key = await defaultKey(storage())
    const v = await insertVerification(storage(), key)
    await storage().write(async (r) => {
      await r.events.add(event('verification.sent', v))
      await r.events.add(event('verification.approved', v))
      await r.events.add(event('verification.locked', v))
    })
    expect((await stored()).map((e) => e.endpoints)).toEqual([[all!, sent!], [all!, approved!], [all!]])
    expect(elsewhere).toBeGreaterThan(0)
  })

  test('an endpoint added in the same transaction gets the events after it', async () => {
    const key = await defaultKey(storage())
    const v = await insertVerification(storage(), key)
    const id = await storage().write(async (r) => {
      await r.events.add(event('verification.sent', v))
      const id = await endpoint(r, null)
      await r.events.add(event('verification.approved', v))
      return id
    })
    expect((await stored()).map((e) => e.endpoints)).toEqual([[], [id]])
  })

  test('an event of an account that does not exist is refused, with nothing of its transaction in force', async () => {
    const key = await defaultKey(storage())
    const v = await insertVerification(storage(), key)
    const failing = storage().write(async (r) => {
      await r.events.add(event('verification.sent', v))
      await r.events.add(event('send.blocked', null, T0, 9999))
    })
    await expect(failing).rejects.toThrow('an event for account 9999, which does not exist')
    expect(await stored()).toEqual([])
  })
})

describe('expiredUnreported', () => {
  test('unused active verifications that expired in (from, to], oldest expiry first, at most `limit`', async () => {
    const key = await defaultKey(storage())
    const exp = (m: number) => ({ expiresAt: T0 + m * MINUTE })
    const b = await insertVerification(storage(), key, exp(2))
    const a = await insertVerification(storage(), key, exp(1))
    const c = await insertVerification(storage(), key, exp(3))
    await insertVerification(storage(), key, { ...exp(2), usedAt: T0 })
    await insertVerification(storage(), key, { ...exp(2), status: 'failed', delivery: 'failed' })
    await insertVerification(storage(), key, { ...exp(2), status: 'canceled' })
    await insertVerification(storage(), key, exp(4))
    const scan = (from: number, to: number, limit = 10) => storage().write((r) => r.events.expiredUnreported(from, to, limit))
    expect(await scan(T0, T0 + 3 * MINUTE)).toEqual([a, b, c])
    expect((await scan(T0 + MINUTE, T0 + 3 * MINUTE)).map((v) => v.seq)).toEqual([b.seq, c.seq])
    expect((await scan(T0, T0 + 3 * MINUTE, 2)).map((v) => v.seq)).toEqual([a.seq, b.seq])
  })

  test('one with a `verification.expired` or `verification.canceled` event is reported already; other events do not count', async () => {
    const key = await defaultKey(storage())
    const expired = await insertVerification(storage(), key)
    const canceled = await insertVerification(storage(), key)
    const sent = await insertVerification(storage(), key)
    await storage().write(async (r) => {
      await r.events.add(event('verification.expired', expired))
      await r.events.add(event('verification.canceled', canceled))
      await r.events.add(event('verification.sent', sent))
    })
    const due = await storage().write((r) => r.events.expiredUnreported(T0, T0 + 60 * MINUTE, 10))
    expect(due.map((v) => v.seq)).toEqual([sent.seq])
  })
})

test('the expiry cursor is null before the first scan, then where the last scan set it', async () => {
  expect(await storage().write((r) => r.events.expiryCursor())).toBeNull()
  await storage().write((r) => r.events.setExpiryCursor(T0))
  expect(await storage().read((r) => r.events.expiryCursor())).toBe(T0)
  await storage().write((r) => r.events.setExpiryCursor(T0 + MINUTE))
  expect(await storage().write((r) => r.events.expiryCursor())).toBe(T0 + MINUTE)
})
