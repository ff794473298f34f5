/**
 * The fraud guard's order and modes (docs/api.md#fraud-guard): validation,
 * the test-recipient short-circuit, rules 1, 2, 3 (and 4), 5, then the
 * per-recipient limits and credits; monitor decides and records but refuses
 * nothing, off evaluates none of rules 1-4, a reload applies [fraud] to the
 * next send.
 */
import { describe, expect, test } from 'bun:test'
import { resolveConfig } from '../../src/app/load-config.ts'
import { balance, ca, guardedPerTest, PUMPING, refusals, us, uz, uzEvidence } from '../kit/fraud.ts'
import { MINUTE, TEST } from '../kit/harness.ts'
import { sameDatabase } from '../kit/same-database.ts'

const signedIn = guardedPerTest()

describe('order', () => {
  test('validation, then the test-recipient short-circuit, then rules 1, 2, 3, 5, then the per-recipient limits', async () => {
    const h = await signedIn(
      { allowed_countries: ['US', 'CA'], ip_per_hour: 1, new_country_per_hour: 1 },
      { config: { limits: { key_requests_per_minute: 1000, recipient_per_minute: 1 } } },
    )
    expect((await h.send({ channel: 'sms', recipient: uz(1), expires_in: 1 })).status).toBe(400)
    expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS, ip: '192.0.2.1' })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: us(1), ip: '192.0.2.1' })).status).toBe(200)
    // us(1): per-recipient full, rule 3 full, IP full, and UZ not allowed: rule 1 answers.
    expect((await h.send({ channel: 'sms', recipient: uz(1), ip: '192.0.2.1' })).status).toBe(403)
    // Rule 2 before rule 3 and the per-recipient limits.
    expect((await h.send({ channel: 'sms', recipient: us(1), ip: '192.0.2.1' })).json.error).toStartWith(
      'Rate limit exceeded: Maximum 1 verification codes per hour for this IP address.',
    )
    // Rule 3 before the per-recipient limits.
    expect((await h.send({ channel: 'sms', recipient: us(1) })).json.error).toStartWith('Sending to this destination is temporarily blocked')
    // Rule 5 after rules 1-4.
    await h.server.fraud.setAccount('default', { dailyCreditLimit: 1 })
    expect((await h.send({ channel: 'sms', recipient: us(1) })).json.error).toStartWith('Sending to this destination is temporarily blocked')
    expect((await h.send({ channel: 'sms', recipient: ca(1) })).json.error).toStartWith('Daily credit limit of 1 reached')
    // The per-recipient limits come after every rule.
    await h.server.fraud.setAccount('default', { dailyCreditLimit: null })
    expect((await h.send({ channel: 'sms', recipient: ca(1) })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: ca(1) })).json.error).toStartWith('Sending to this destination is temporarily blocked')
  })

  test('rules 1 and 2 come before rule 4; rule 4 before rule 5; the guard before the per-recipient limits and credits', async () => {
    const h = await signedIn({ ip_per_hour: 1 }, { config: { limits: { key_requests_per_minute: 1000, recipient_per_minute: 1 } } })
    await uzEvidence(h)
    expect((await h.send({ channel: 'sms', recipient: uz(100), ip: '192.0.2.7' })).json.error).toBe(PUMPING(900)) // both scopes block
    // Rule 2 before rule 4: the IP is full (one accepted send) and the prefix blocked.
    expect((await h.send({ channel: 'sms', recipient: us(1), ip: '192.0.2.7' })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(101), ip: '192.0.2.7' })).json.error).toStartWith(
      'Rate limit exceeded: Maximum 1 verification codes per hour for this IP address.',
    )
    // Rule 1 before rule 4.
    await h.server.fraud.setAccount('default', { allowedCountries: ['US'] })
    expect((await h.send({ channel: 'sms', recipient: uz(102) })).status).toBe(403)
    await h.server.fraud.setAccount('default', { allowedCountries: null })
    // Rule 4 before rule 5: the cap is reached too.
    await h.server.fraud.setAccount('default', { dailyCreditLimit: 1 })
    expect((await h.send({ channel: 'sms', recipient: uz(102) })).json.error).toStartWith('Sending to this destination is temporarily blocked')
    expect(await refusals(h, { rule: 'conversion', country: 'UZ', decision: 'refused' })).toBe(2)
    // Rule 5 before the per-recipient limits: us(1) is full for the minute.
    expect((await h.send({ channel: 'sms', recipient: us(1) })).json.error).toStartWith('Daily credit limit of 1 reached')
    await h.server.fraud.setAccount('default', { dailyCreditLimit: null })
    expect((await h.send({ channel: 'sms', recipient: us(1) })).json.error).toStartWith('Rate limit exceeded: Maximum 1 verification codes per minute')
    // The guard before credits (402): with a balance of 0, the refusal is the guard's.
    await h.server.admin.deductCredits(await balance(h))
    expect(await balance(h)).toBe(0)
    expect((await h.send({ channel: 'sms', recipient: uz(103) })).status).toBe(429)
    await h.server.fraud.setAccount('default', { allowedCountries: ['US'] })
    expect((await h.send({ channel: 'sms', recipient: uz(103) })).status).toBe(403)
    expect((await h.send({ channel: 'sms', recipient: us(2) })).status).toBe(402)
  })
})

describe('modes', () => {
  test('monitor refuses nothing, logs and counts the would-be refusals; such sends count toward no rule', async () => {
    const h = await signedIn({ mode: 'monitor', allowed_countries: ['US'], new_country_per_hour: 2 })
    for (let i = 0; i < 3; i++) expect((await h.send({ channel: 'sms', recipient: uz(i) })).status).toBe(200)
    expect(h.delivery.sent).toHaveLength(3)
    expect(await refusals(h, { rule: 'geo', country: 'UZ', decision: 'would_refuse' })).toBe(3)
    expect(await refusals(h, { rule: 'geo', country: 'UZ', decision: 'refused' })).toBe(0)
    expect(h.logs.filter((l) => l.includes('would be refused by the fraud guard'))).toHaveLength(3)
    // US: 2 allowed by rule 3, then would-be refusals; those did not count, so the 3rd and 4th decide alike.
    for (let i = 0; i < 4; i++) expect((await h.send({ channel: 'sms', recipient: us(i) })).status).toBe(200)
    expect(await refusals(h, { rule: 'new_country', country: 'US', decision: 'would_refuse' })).toBe(2)
  })

  test('off evaluates none of rules 1-4', async () => {
    const h = await signedIn({ mode: 'off', allowed_countries: ['US'], new_country_per_hour: 1 })
    for (let i = 0; i < 3; i++) expect((await h.send({ channel: 'sms', recipient: uz(i) })).status).toBe(200)
    expect(await refusals(h, { rule: 'geo', country: 'UZ', decision: 'would_refuse' })).toBe(0)
  })

  test('off records no send: switched on, the hour holds none of them; an approval made while off of a send recorded before still proves its country', async () => {
    const h = await signedIn({ mode: 'enforce', new_country_per_hour: 2 })
    const before = await h.send({ channel: 'sms', recipient: uz(50), code: '424242' })
    expect(before.status).toBe(200)
    h.server.reload(resolveConfig({ ...sameDatabase(h), fraud: { mode: 'off', new_country_per_hour: 2 } }))
    for (let i = 0; i < 3; i++) expect((await h.send({ channel: 'sms', recipient: uz(i) })).status).toBe(200)
    // fraud status counts the send made in enforce only.
    expect((await h.server.fraud.status()).countries.map((c) => [c.country, c.sends, c.approved])).toEqual([['UZ', 1, 0]])
    h.server.reload(resolveConfig({ ...sameDatabase(h), fraud: { mode: 'enforce', new_country_per_hour: 2 } }))
    // The hour holds the one send recorded: one more, then rule 3 refuses (it would at once, had the 3 sends made while off counted).
    expect((await h.send({ channel: 'sms', recipient: uz(10) })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(11) })).json.error).toStartWith('Sending to this destination is temporarily blocked')
    // Approved while off: the send recorded before proves UZ once the guard is back on.
    h.server.reload(resolveConfig({ ...sameDatabase(h), fraud: { mode: 'off', new_country_per_hour: 2 } }))
    expect((await h.verify({ verification_id: before.json.verification_id, code: '424242' })).json.verified).toBe(true)
    h.server.reload(resolveConfig({ ...sameDatabase(h), fraud: { mode: 'enforce', new_country_per_hour: 2 } }))
    for (let i = 12; i < 16; i++) expect((await h.send({ channel: 'sms', recipient: uz(i) })).status).toBe(200)
  })

  test('a reload (SIGHUP) applies [fraud] to the next send', async () => {
    const h = await signedIn({ allowed_countries: ['US'] })
    expect((await h.send({ channel: 'sms', recipient: uz(1) })).status).toBe(403)
    h.server.reload(resolveConfig({ ...sameDatabase(h), fraud: { mode: 'monitor', allowed_countries: ['US'] } }))
    expect((await h.send({ channel: 'sms', recipient: uz(1) })).status).toBe(200)
    h.server.reload(resolveConfig({ ...sameDatabase(h), fraud: { allowed_countries: ['UZ'] } }))
    expect((await h.send({ channel: 'sms', recipient: us(1) })).status).toBe(403)
  })

  test('monitor: rule 2 and rule 4 decide and record (the block starts, status shows it) and refuse nothing; enforce then refuses with the block left', async () => {
    const h = await signedIn({ mode: 'monitor', ip_per_hour: 1 })
    await uzEvidence(h)
    const before = h.delivery.sent.length
    expect((await h.send({ channel: 'sms', recipient: uz(1), ip: '192.0.2.9' })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: us(1), ip: '192.0.2.9' })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: us(2), ip: '192.0.2.9' })).status).toBe(200)
    expect(h.delivery.sent.length).toBe(before + 3)
    expect(await refusals(h, { rule: 'conversion', country: 'UZ', decision: 'would_refuse' })).toBe(1)
    // us(1) was the IP's first counted send (uz(1) would have been refused, so it counts toward no rule).
    expect(await refusals(h, { rule: 'ip', country: 'US', decision: 'would_refuse' })).toBe(1)
    expect(await refusals(h, { rule: 'conversion', country: 'UZ', decision: 'refused' })).toBe(0)
    const now = h.clock.now()
    expect((await h.server.fraud.status()).blocks.map((b) => [b.kind, b.scope, b.until - now])).toEqual([
      ['country', 'UZ', 15 * MINUTE],
      ['prefix', '+99890123', 15 * MINUTE],
    ])
    h.clock.advance(5 * MINUTE)
    h.server.reload(resolveConfig({ ...sameDatabase(h), fraud: { mode: 'enforce', ip_per_hour: 1 } }))
    const r = await h.send({ channel: 'sms', recipient: uz(2) })
    expect(r.status).toBe(429)
    expect(r.json.retry_after).toBe(600)
  })

  test('off: rules 2 and 4 are not evaluated either (no block starts, nothing would be refused, nothing logged)', async () => {
    const h = await signedIn({ mode: 'off', ip_per_hour: 1 })
    await uzEvidence(h)
    for (let i = 0; i < 3; i++) expect((await h.send({ channel: 'sms', recipient: uz(i), ip: '192.0.2.9' })).status).toBe(200)
    expect((await h.server.fraud.status()).blocks).toEqual([])
    expect(await refusals(h, { rule: 'ip', country: 'UZ', decision: 'would_refuse' })).toBe(0)
    expect(await refusals(h, { rule: 'conversion', country: 'UZ', decision: 'would_refuse' })).toBe(0)
    expect(h.logs.filter((l) => l.includes('fraud guard'))).toEqual([])
  })
})
