/**
 * VerificationStore contract: the rules the send, verify, status, cancel,
 * receipt and recovery use cases rely on, the same on every engine.
 */
import { describe, expect, test } from 'bun:test'
import type { RecordedReceipt } from '../../../src/otp/ports/index.ts'
import type { Verification } from '../../../src/otp/types.ts'
import { defaultKey, hash, insertVerification, MINUTE, reread, T0, useEngine } from './data.ts'

const engine = useEngine()
const storage = () => engine().storage

describe('numbering and reading back', () => {
  test('nextSeq hands out rising numbers, past every row inserted', async () => {
    const key = await defaultKey(storage())
    const a = await insertVerification(storage(), key)
    const b = await insertVerification(storage(), key)
    expect(b.seq).toBeGreaterThan(a.seq)
    const next = await storage().write((r) => r.verifications.nextSeq())
    expect(next).toBeGreaterThan(b.seq)
  })

  test('a verification reads back field for field (bytes, booleans, nulls and numbers as written)', async () => {
    const key = await defaultKey(storage())
    const v = await insertVerification(storage(), key, { testMode: null, charged: true, lockedUntil: null, country: 'GB', fraudMonitored: 'new_country' })
    const t = await insertVerification(storage(), key, {
      channel: 'email',
      testMode: 'success',
      charged: false,
      delivery: null,
      usedAt: T0 + 5,
      failedAttempts: 2,
      lockedUntil: T0 + 7,
      deliveryProvider: 'p',
      deliveryUpdatedAt: T0 + 9,
    })
    for (const x of [v, t]) {
      expect(await storage().read((r) => r.verifications.findForKey(x.id, x.seq, key))).toEqual(x)
      expect(await reread(storage(), x)).toEqual(x)
    }
  })
})

describe('findForKey and findById', () => {
  test('a row is found by its number and id under its own key only', async () => {
    const key = await defaultKey(storage())
    const other = await defaultKey(storage(), 'pk_other')
    const v = await insertVerification(storage(), key)
    const find = (id: string, seq: number | null, keyId: number) => storage().read((r) => r.verifications.findForKey(id, seq, keyId))
    expect((await find(v.id, v.seq, key))?.seq).toBe(v.seq)
    expect(await find(v.id, v.seq, other)).toBeUndefined()
    // A number given again to another row: the id no longer matches.
    expect(await find('v-someone-else', v.seq, key)).toBeUndefined()
    expect(await find(v.id, v.seq + 1000, key)).toBeUndefined()
  })

  test('an id from before ids carried numbers is found through the legacy table, under its key only', async () => {
    const key = await defaultKey(storage())
    const other = await defaultKey(storage(), 'pk_other')
    const v = await insertVerification(storage(), key, { id: 'legacy-id-0001' })
    await engine().sql('INSERT INTO verification_legacy_ids (seq, id) VALUES ($1, $2)', [v.seq, v.id])
    const find = (seq: number | null, keyId: number) => storage().read((r) => r.verifications.findForKey(v.id, seq, keyId))
    expect((await find(null, key))?.seq).toBe(v.seq)
    // A number read from the id that names no row with it: the legacy look-up still finds it.
    expect((await find(v.seq + 1000, key))?.seq).toBe(v.seq)
    expect(await find(null, other)).toBeUndefined()
    // The legacy row points at a number whose row now has another id.
    await engine().sql('UPDATE verification_legacy_ids SET id = $1 WHERE seq = $2', ['legacy-id-0002', v.seq])
    expect(await storage().read((r) => r.verifications.findForKey('legacy-id-0002', null, key))).toBeUndefined()
  })

  test('findById finds the row whatever its key, and nothing for another id', async () => {
    const key = await defaultKey(storage())
    const v = await insertVerification(storage(), key)
    expect((await storage().read((r) => r.verifications.findById(v.id, v.seq)))?.keyId).toBe(key)
    expect(await storage().read((r) => r.verifications.findById('v-other', v.seq))).toBeUndefined()
  })
})

describe('single use and attempts', () => {
  test('markUsed records the use and clears the attempts and the lockout', async () => {
    const key = await defaultKey(storage())
    const v = await insertVerification(storage(), key, { failedAttempts: 3, lockedUntil: T0 + MINUTE })
    await storage().write((r) => r.verifications.markUsed(v.seq, T0 + 10))
    expect(await reread(storage(), v)).toMatchObject({ usedAt: T0 + 10, failedAttempts: 0, lockedUntil: null })
  })

  test('setAttempts records failed attempts and the lockout, and only on its row', async () => {
    const key = await defaultKey(storage())
    const v = await insertVerification(storage(), key)
    const w = await insertVerification(storage(), key)
    await storage().write((r) => r.verifications.setAttempts(v.seq, 4, T0 + 2 * MINUTE))
    expect(await reread(storage(), v)).toMatchObject({ failedAttempts: 4, lockedUntil: T0 + 2 * MINUTE })
    expect(await reread(storage(), w)).toMatchObject({ failedAttempts: 0, lockedUntil: null })
    await storage().write((r) => r.verifications.setAttempts(v.seq, 0, null))
    expect(await reread(storage(), v)).toMatchObject({ failedAttempts: 0, lockedUntil: null })
  })
})

describe('recipientSendTimes: the per-recipient window', () => {
  test('ascending times after `since` of this recipient; failed and test-mode sends do not count, canceled ones do', async () => {
    const key = await defaultKey(storage())
    const r1 = hash('alice')
    const at = (m: number) => T0 + m * MINUTE
    await insertVerification(storage(), key, { recipientHash: r1, createdAt: at(3) })
    await insertVerification(storage(), key, { recipientHash: r1, createdAt: at(1) })
    await insertVerification(storage(), key, { recipientHash: r1, createdAt: at(2), status: 'canceled' })
    await insertVerification(storage(), key, { recipientHash: r1, createdAt: at(4), status: 'failed', delivery: 'failed' })
    await insertVerification(storage(), key, { recipientHash: r1, createdAt: at(5), testMode: 'success', charged: false, delivery: null })
    await insertVerification(storage(), key, { recipientHash: r1, createdAt: at(0) })
    await insertVerification(storage(), key, { recipientHash: hash('bob'), createdAt: at(2) })
    const times = (since: number) => storage().write((r) => r.verifications.recipientSendTimes(r1, since))
    expect(await times(at(0))).toEqual([at(1), at(2), at(3)])
    expect(await times(at(0) - 1)).toEqual([at(0), at(1), at(2), at(3)])
    expect(await times(at(3))).toEqual([])
    expect(await storage().read((r) => r.verifications.recipientSendTimes(hash('carol'), 0))).toEqual([])
  })
})

describe('cancel', () => {
  test('only an active verification becomes canceled: a failed one stays failed', async () => {
    const key = await defaultKey(storage())
    const active = await insertVerification(storage(), key, { delivery: 'accepted' })
    const failed = await insertVerification(storage(), key, { status: 'failed', delivery: 'failed' })
    await storage().write(async (r) => {
      await r.verifications.cancel(active.seq)
      await r.verifications.cancel(failed.seq)
    })
    expect((await reread(storage(), active))?.status).toBe('canceled')
    expect((await reread(storage(), failed))?.status).toBe('failed')
    await storage().write((r) => r.verifications.cancel(active.seq))
    expect((await reread(storage(), active))?.status).toBe('canceled')
  })
})

describe('settleDelivery', () => {
  test('settles a delivery still `sending` once; a second settlement changes nothing', async () => {
    const key = await defaultKey(storage())
    const v = await insertVerification(storage(), key)
    const settled = await storage().write((r) => r.verifications.settleDelivery(v.seq, 'accepted', 'p1', T0 + 1))
    expect(await reread(storage(), v)).toMatchObject({ status: 'active', delivery: 'accepted', deliveryProvider: 'p1', deliveryUpdatedAt: T0 + 1 })
    // The row as it is after the change, as a read of it gives it (the `verification.sent` event is made from it).
    expect(settled).toEqual((await reread(storage(), v))!)
    for (const state of ['failed', 'unknown', 'accepted'] as const) {
      expect(await storage().write((r) => r.verifications.settleDelivery(v.seq, state, 'p2', T0 + 2))).toBeNull()
    }
    expect(await reread(storage(), v)).toMatchObject({ status: 'active', delivery: 'accepted', deliveryProvider: 'p1', deliveryUpdatedAt: T0 + 1 })
  })

  test('`failed` takes an active verification out of use; `unknown` leaves it verifiable', async () => {
    const key = await defaultKey(storage())
    const failed = await insertVerification(storage(), key)
    const unknown = await insertVerification(storage(), key)
    await storage().write(async (r) => {
      expect(await r.verifications.settleDelivery(failed.seq, 'failed', null, T0 + 1)).not.toBeNull()
      expect(await r.verifications.settleDelivery(unknown.seq, 'unknown', null, T0 + 1)).not.toBeNull()
    })
    expect(await reread(storage(), failed)).toMatchObject({ status: 'failed', delivery: 'failed', deliveryProvider: null })
    expect(await reread(storage(), unknown)).toMatchObject({ status: 'active', delivery: 'unknown' })
  })

  test('a verification canceled during its delivery stays canceled when the delivery fails', async () => {
    const key = await defaultKey(storage())
    const v = await insertVerification(storage(), key)
    await storage().write((r) => r.verifications.cancel(v.seq))
    expect(await storage().write((r) => r.verifications.settleDelivery(v.seq, 'failed', null, T0 + 1))).not.toBeNull()
    expect(await reread(storage(), v)).toMatchObject({ status: 'canceled', delivery: 'failed' })
  })

  test('a test-recipient verification (no delivery) is never settled', async () => {
    const key = await defaultKey(storage())
    const v = await insertVerification(storage(), key, { testMode: 'success', charged: false, delivery: null })
    expect(await storage().write((r) => r.verifications.settleDelivery(v.seq, 'failed', null, T0 + 1))).toBeNull()
    expect(await reread(storage(), v)).toMatchObject({ status: 'active', delivery: null })
  })
})

describe('recordReceipt', () => {
  const receipt = (v: Verification, state: 'delivered' | 'undelivered' | 'accepted', provider: string, at: number, more: Partial<RecordedReceipt> = {}) =>
    storage().write((r) => r.verifications.recordReceipt(v.seq, { state, provider, at, ref: null, error: null, ...more }))

  test('a delivery `sending` or `unknown` takes a receipt from any provider', async () => {
    const key = await defaultKey(storage())
    const sending = await insertVerification(storage(), key)
    const unknown = await insertVerification(storage(), key, { delivery: 'unknown' })
    expect(await receipt(sending, 'delivered', 'p1', T0 + 1)).toBe(true)
    expect(await receipt(unknown, 'undelivered', 'p2', T0 + 2)).toBe(true)
    expect(await reread(storage(), sending)).toMatchObject({ delivery: 'delivered', deliveryProvider: 'p1', deliveryUpdatedAt: T0 + 1 })
    expect(await reread(storage(), unknown)).toMatchObject({ delivery: 'undelivered', deliveryProvider: 'p2', deliveryUpdatedAt: T0 + 2 })
    // The send's own record of `accepted` that comes after the receipt changes nothing.
    expect(await storage().write((r) => r.verifications.settleDelivery(sending.seq, 'accepted', 'p1', T0 + 3))).toBeNull()
    expect((await reread(storage(), sending))?.delivery).toBe('delivered')
  })

  test('an `accepted` delivery takes a receipt from the provider that took it only', async () => {
    const key = await defaultKey(storage())
    const v = await insertVerification(storage(), key, { delivery: 'accepted', deliveryProvider: 'p1', deliveryUpdatedAt: T0 })
    expect(await receipt(v, 'delivered', 'p2', T0 + 1)).toBe(false)
    expect(await reread(storage(), v)).toMatchObject({ delivery: 'accepted', deliveryProvider: 'p1', deliveryUpdatedAt: T0 })
    expect(await receipt(v, 'delivered', 'p1', T0 + 2)).toBe(true)
    expect(await reread(storage(), v)).toMatchObject({ delivery: 'delivered', deliveryProvider: 'p1', deliveryUpdatedAt: T0 + 2 })
  })

  test('a final status stays, and a `failed` delivery (refunded) is kept', async () => {
    const key = await defaultKey(storage())
    const delivered = await insertVerification(storage(), key, { delivery: 'delivered', deliveryProvider: 'p1', deliveryUpdatedAt: T0 })
    const undelivered = await insertVerification(storage(), key, { delivery: 'undelivered', deliveryProvider: 'p1', deliveryUpdatedAt: T0 })
    const failed = await insertVerification(storage(), key, { status: 'failed', delivery: 'failed', deliveryUpdatedAt: T0 })
    const testMode = await insertVerification(storage(), key, { testMode: 'success', charged: false, delivery: null })
    expect(await receipt(delivered, 'undelivered', 'p1', T0 + 1)).toBe(false)
    expect(await receipt(undelivered, 'delivered', 'p1', T0 + 1)).toBe(false)
    expect(await receipt(failed, 'delivered', 'p1', T0 + 1)).toBe(false)
    expect(await receipt(testMode, 'delivered', 'p1', T0 + 1)).toBe(false)
    expect(await reread(storage(), delivered)).toMatchObject({ delivery: 'delivered', deliveryUpdatedAt: T0 })
    expect(await reread(storage(), undelivered)).toMatchObject({ delivery: 'undelivered', deliveryUpdatedAt: T0 })
    expect(await reread(storage(), failed)).toMatchObject({ status: 'failed', delivery: 'failed', deliveryProvider: null })
    expect(await reread(storage(), testMode)).toMatchObject({ delivery: null })
  })

  test("`accepted` (Meta's `sent`) moves only a delivery `sending` or `unknown`: a status never moves back", async () => {
    const key = await defaultKey(storage())
    const sending = await insertVerification(storage(), key)
    const accepted = await insertVerification(storage(), key, { delivery: 'accepted', deliveryProvider: 'p1', deliveryUpdatedAt: T0 })
    const delivered = await insertVerification(storage(), key, { delivery: 'delivered', deliveryProvider: 'p1', deliveryUpdatedAt: T0 })
    expect(await receipt(sending, 'accepted', 'p1', T0 + 1, { ref: 'wamid.A' })).toBe(true)
    expect(await reread(storage(), sending)).toMatchObject({ delivery: 'accepted', deliveryProvider: 'p1', deliveryRef: 'wamid.A' })
    expect(await receipt(accepted, 'accepted', 'p1', T0 + 1)).toBe(false)
    expect(await receipt(delivered, 'accepted', 'p1', T0 + 1)).toBe(false)
    expect(await reread(storage(), delivered)).toMatchObject({ delivery: 'delivered', deliveryUpdatedAt: T0 })
  })

  test("an undelivered receipt keeps the vendor's error; the vendor's id is kept, or taken from the receipt", async () => {
    const key = await defaultKey(storage())
    const v = await insertVerification(storage(), key)
    await storage().write((r) => r.verifications.settleDelivery(v.seq, 'accepted', 'p1', T0 + 1, { ref: 'wamid.B', language: 'pt_BR' }))
    expect(await reread(storage(), v)).toMatchObject({ deliveryRef: 'wamid.B', deliveryLanguage: 'pt_BR' })
    expect((await reread(storage(), v))?.deliveryError).toBeUndefined()
    expect(await storage().read((r) => r.verifications.findByRef('p1', 'wamid.B'))).toEqual({ seq: v.seq, id: v.id })
    expect(await storage().read((r) => r.verifications.findByRef('p2', 'wamid.B'))).toBeUndefined()
    expect(await storage().read((r) => r.verifications.findByRef('p1', 'wamid.C'))).toBeUndefined()
    const error = { code: '131026', title: 'Message undeliverable' }
    expect(await receipt(v, 'undelivered', 'p1', T0 + 2, { error })).toBe(true)
    expect(await reread(storage(), v)).toMatchObject({ delivery: 'undelivered', deliveryRef: 'wamid.B', deliveryError: error })
  })
})

describe('unsettled', () => {
  test('charged sends still `sending` made at or before `before`, oldest first, at most `limit`', async () => {
    const key = await defaultKey(storage())
    const at = (m: number) => T0 + m * MINUTE
    const b = await insertVerification(storage(), key, { createdAt: at(2) })
    const a = await insertVerification(storage(), key, { createdAt: at(1) })
    const c = await insertVerification(storage(), key, { createdAt: at(3) })
    await insertVerification(storage(), key, { createdAt: at(0), delivery: 'accepted' })
    await insertVerification(storage(), key, { createdAt: at(0), delivery: 'unknown' })
    await insertVerification(storage(), key, { createdAt: at(0), testMode: 'success', charged: false, delivery: null })
    const page = (before: number, limit: number) => storage().read((r) => r.verifications.unsettled(before, limit))
    expect(await page(at(3), 10)).toEqual([a, b, c].map((v) => ({ seq: v.seq, id: v.id, accountId: v.accountId })))
    expect((await page(at(2), 10)).map((v) => v.seq)).toEqual([a.seq, b.seq])
    expect((await page(at(3), 1)).map((v) => v.seq)).toEqual([a.seq])
    expect(await page(at(1) - 1, 10)).toEqual([])
  })
})
