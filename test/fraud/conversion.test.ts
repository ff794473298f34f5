/**
 * Fraud guard rule 4 (docs/api.md#fraud-guard): conversion blocks per prefix
 * and country, the grace period, escalation (15 min x4, at most 12 h), expiry
 * and `unblock`, on the injected clock.
 */
import { describe, expect, test } from 'bun:test'
import { blockDuration } from '../../src/otp/fraud.ts'
import { approve, GRACE, guardedPerTest, PUMPING, refusals, sendAccepted, uz, uz2 } from '../kit/fraud.ts'
import { DAY, HOUR, MINUTE, type Harness } from '../kit/harness.ts'

const signedIn = guardedPerTest()

const block = async (h: Harness) => (await h.server.fraud.status()).blocks

test('block lengths: 15 min, x4 per new block, at most 12 h', () => {
  expect([0, 1, 2, 3, 4, 20].map(blockDuration)).toEqual([15 * MINUTE, HOUR, 4 * HOUR, 12 * HOUR, 12 * HOUR, 12 * HOUR])
})

describe('rule 4: conversion', () => {
  test('20 unapproved sends older than the grace period block the prefix and the country for 15 min', async () => {
    const h = await signedIn()
    await approve(h, uz2(1)) // UZ proven: rule 3 stays out of the way; the approval is in another prefix
    h.clock.advance(DAY) // ...and out of the 24 h window, so the country's conversion is 0 %
    await sendAccepted(h, 20)
    h.clock.advance(GRACE - 1) // one ms short of the grace period: not evidence yet
    expect((await h.send({ channel: 'sms', recipient: uz(1) })).status).toBe(200)
    h.clock.advance(1)
    const r = await h.send({ channel: 'sms', recipient: uz(2) })
    expect(r.status).toBe(429)
    expect(r.json.error).toBe(PUMPING(900))
    expect(r.json.retry_after).toBe(900)
    expect(r.headers.get('retry-after')).toBe('900')
    const now = h.clock.now()
    expect((await block(h)).map((b) => [b.rule, b.kind, b.scope, b.level, b.until])).toEqual([
      ['conversion', 'country', 'UZ', 0, now + 15 * MINUTE],
      ['conversion', 'prefix', '+99890123', 0, now + 15 * MINUTE],
    ])
    // The country's block covers its other prefixes too.
    expect((await h.send({ channel: 'sms', recipient: uz2(5) })).status).toBe(429)
    h.clock.advance(5 * MINUTE)
    expect((await h.send({ channel: 'sms', recipient: uz(3) })).json.retry_after).toBe(600)
    expect(await refusals(h, { rule: 'conversion', country: 'UZ', decision: 'refused' })).toBe(3)
  })

  test('at least 20 % approved: no block; under 20 sends: no block', async () => {
    let h = await signedIn()
    await approve(h, uz2(1))
    h.clock.advance(DAY)
    for (let i = 0; i < 4; i++) await approve(h, uz(200 + i))
    await sendAccepted(h, 16) // 4 of 20 approved: exactly 20 %, not under it
    h.clock.advance(GRACE)
    expect((await h.send({ channel: 'sms', recipient: uz(1) })).status).toBe(200)
    // That send makes 4 of 21 (19 %) once it is older than the grace period.
    h.clock.advance(GRACE - 1)
    expect((await h.send({ channel: 'sms', recipient: uz(2) })).status).toBe(200)
    h.clock.advance(1)
    expect((await h.send({ channel: 'sms', recipient: uz(3) })).status).toBe(429)

    h.close()
    h = await signedIn()
    await approve(h, uz2(1))
    h.clock.advance(DAY)
    await sendAccepted(h, 19)
    h.clock.advance(HOUR)
    expect((await h.send({ channel: 'sms', recipient: uz(1) })).status).toBe(200)
  })

  test('escalation: each new block of the scope within 24 h of the last lasts 4 times longer, up to 12 h; 24 h after the last, 15 min again', async () => {
    const h = await signedIn()
    await approve(h, uz2(1))
    h.clock.advance(DAY)
    const t0 = h.clock.now()
    await sendAccepted(h, 20)
    h.clock.advance(GRACE)
    // Each block ends; the evidence (24 h) is still there, so the next send starts the next block.
    const waits: number[] = []
    while (h.clock.now() < t0 + DAY) {
      const r = await h.send({ channel: 'sms', recipient: uz(waits.length) })
      expect(r.status).toBe(429)
      waits.push(r.json.retry_after)
      h.clock.advance(r.json.retry_after * 1000)
    }
    expect(waits).toEqual([900, 3600, 14_400, 43_200, 43_200])
    // The 20 sends have left the window: no evidence, no block.
    expect((await h.send({ channel: 'sms', recipient: uz(50) })).status).toBe(200)
    expect(await block(h)).toEqual([])
    // More than 24 h after the last block ended, a new block starts at 15 min again.
    h.clock.advance(DAY)
    await sendAccepted(h, 20, 400)
    h.clock.advance(GRACE)
    expect((await h.send({ channel: 'sms', recipient: uz(51) })).json.retry_after).toBe(900)
  })

  test('a send that rule 3 refuses still has both scopes evaluated: the block starts, and the longer wait is reported', async () => {
    const h = await signedIn()
    const t0 = h.clock.now()
    await sendAccepted(h, 10) // UZ never approved: 10 an hour
    h.clock.set(t0 + HOUR)
    await sendAccepted(h, 10, 200)
    h.clock.advance(GRACE)
    const r = await h.send({ channel: 'sms', recipient: uz(1) })
    expect(r.status).toBe(429)
    expect(r.json.error).toBe(PUMPING(3000)) // rule 3: the hour's first send leaves in 50 min; the block lasts 15
    expect(r.json.retry_after).toBe(3000)
    expect((await block(h)).map((b) => b.scope)).toEqual(['UZ', '+99890123'])
    expect(await refusals(h, { rule: 'new_country', country: 'UZ', decision: 'refused' })).toBe(1)
  })

  test('a number of fewer than 8 digits has one scope, its country: 20 unapproved sends block the country only', async () => {
    const h = await signedIn()
    const short = '+3906698' // Vatican City, 7 digits
    await approve(h, '+390669812345') // VA proven, in another prefix
    h.clock.advance(DAY)
    for (let i = 0; i < 20; i++) expect((await h.send({ channel: 'sms', recipient: short })).status).toBe(200)
    h.clock.advance(GRACE)
    const r = await h.send({ channel: 'sms', recipient: short })
    expect(r.json.error).toBe(PUMPING(900))
    expect((await h.server.fraud.status()).blocks.map((b) => [b.kind, b.scope])).toEqual([['country', 'VA']])
    // The country scope covers the longer VA numbers too.
    expect((await h.send({ channel: 'sms', recipient: '+390669812346' })).status).toBe(429)
  })

  test("the status endpoint and verify are not the guard's: a verification sent before a block stays pending, approves and shows approved", async () => {
    const h = await signedIn({ conversion_grace_seconds: 60 }) // within the code's 5 minutes
    await approve(h, uz2(1))
    h.clock.advance(DAY)
    await sendAccepted(h, 19)
    const sent = await h.send({ channel: 'sms', recipient: uz(50), code: '424242' })
    expect(sent.status).toBe(200)
    h.clock.advance(MINUTE)
    expect((await h.send({ channel: 'sms', recipient: uz(51) })).status).toBe(429) // blocked now
    const status = () => h.call(`/api/v1/verifications/${sent.json.verification_id}`, undefined, { method: 'GET', headers: {} })
    const before = await status()
    expect(before.status).toBe(200)
    expect(before.json.status).toBe('pending')
    expect((await h.verify({ verification_id: sent.json.verification_id, code: '424242' })).json.verified).toBe(true)
    expect((await status()).json.status).toBe('approved')
  })
})

describe('otpd fraud unblock (the use case; the command is in cli.test.ts)', () => {
  test('ends the block, resets its escalation, and counts the scope from the unblock on', async () => {
    const h = await signedIn()
    await approve(h, uz2(1))
    h.clock.advance(DAY)
    await sendAccepted(h, 20)
    h.clock.advance(GRACE)
    expect((await h.send({ channel: 'sms', recipient: uz(1) })).json.retry_after).toBe(900)
    h.clock.advance(15 * MINUTE)
    expect((await h.send({ channel: 'sms', recipient: uz(1) })).json.retry_after).toBe(3600) // level 1
    expect(await h.server.fraud.unblock('uz')).toEqual({ account: 'default', kind: 'country', scope: 'UZ', wasBlocked: true })
    expect(await h.server.fraud.unblock('+99890123')).toEqual({ account: 'default', kind: 'prefix', scope: '+99890123', wasBlocked: true })
    expect(await block(h)).toEqual([])
    // The 20 sends before the unblock no longer count.
    expect((await h.send({ channel: 'sms', recipient: uz(1) })).status).toBe(200)
    await sendAccepted(h, 19, 500)
    h.clock.advance(GRACE)
    // Escalation reset: the next block is 15 min again.
    expect((await h.send({ channel: 'sms', recipient: uz(2) })).json.retry_after).toBe(900)
    expect(await h.server.fraud.unblock('UZ')).toMatchObject({ wasBlocked: true })
    expect(await h.server.fraud.unblock('GB')).toMatchObject({ wasBlocked: false })
    await expect(h.server.fraud.unblock('uzb')).rejects.toThrow("'uzb' is not a scope")
    await expect(h.server.fraud.unblock('XQ')).rejects.toThrow("'XQ' is no country code")
  })

  test('when both scopes are blocked the longer wait is reported', async () => {
    const h = await signedIn()
    await approve(h, uz2(1))
    h.clock.advance(DAY)
    await sendAccepted(h, 20)
    h.clock.advance(GRACE)
    expect((await h.send({ channel: 'sms', recipient: uz(1) })).json.retry_after).toBe(900)
    h.clock.advance(15 * MINUTE)
    expect((await h.send({ channel: 'sms', recipient: uz(1) })).json.retry_after).toBe(3600) // both at level 1
    await h.server.fraud.unblock('UZ') // the country only: escalation reset, counted from now
    await sendAccepted(h, 20, 0, uz2) // the other prefix, allowed again
    h.clock.advance(GRACE)
    // The country blocks again at level 0 (900 s); the prefix still has 3000 s of its 3600: the longer is reported.
    expect((await h.send({ channel: 'sms', recipient: uz(3) })).json.retry_after).toBe(3000)
    expect((await h.send({ channel: 'sms', recipient: uz2(99) })).json.retry_after).toBe(900)
  })

  test('a block survives a restart (the counters are in the database)', async () => {
    let h = await signedIn()
    await approve(h, uz2(1))
    h.clock.advance(DAY)
    await sendAccepted(h, 20)
    h.clock.advance(GRACE)
    expect((await h.send({ channel: 'sms', recipient: uz(1) })).status).toBe(429)
    h = await h.restart()
    h.clock.advance(MINUTE)
    expect((await h.send({ channel: 'sms', recipient: uz(1) })).json.retry_after).toBe(840)
  })
})
