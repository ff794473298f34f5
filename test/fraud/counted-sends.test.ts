/**
 * Which sends the guard's rules count (docs/api.md#fraud-guard): "sends" are
 * the sends to real recipients that this account had accepted. Email is
 * exempt from rules 1-4 (its ip neither meets nor counts toward rule 2);
 * another account's sends, and sends refused by credits, by a per-recipient
 * limit or by the guard itself, count toward no rule.
 */
import { describe, expect, test } from 'bun:test'
import { approve, GRACE, guardedPerTest, PUMPING, sendAccepted, us, uz, uz2 } from '../kit/fraud.ts'
import { DAY, HOUR } from '../kit/harness.ts'

const signedIn = guardedPerTest()

const IP_LIMIT = (s: number) => `Rate limit exceeded: Maximum 1 verification codes per hour for this IP address. Please try again in ${s} seconds.`

describe('exemptions', () => {
  test('email is exempt from rules 1-4: its ip neither meets nor counts toward rule 2; rule 5 still applies', async () => {
    const h = await signedIn({ allowed_countries: ['US'], ip_per_hour: 1 })
    expect((await h.send({ channel: 'email', recipient: 'a@example.com', ip: '192.0.2.1' })).status).toBe(200)
    expect((await h.send({ channel: 'email', recipient: 'b@example.com', ip: '192.0.2.1' })).status).toBe(200)
    // The two emails did not use the IP's one send an hour.
    expect((await h.send({ channel: 'sms', recipient: us(1), ip: '192.0.2.1' })).status).toBe(200)
    // Now it is full: email still goes.
    expect((await h.send({ channel: 'sms', recipient: us(2), ip: '192.0.2.1' })).status).toBe(429)
    expect((await h.send({ channel: 'email', recipient: 'c@example.com', ip: '192.0.2.1' })).status).toBe(200)
    await h.server.fraud.setAccount('default', { dailyCreditLimit: 4 })
    const r = await h.send({ channel: 'email', recipient: 'd@example.com' })
    expect(r.status).toBe(429)
    expect(r.json.error).toStartWith('Daily credit limit of 4 reached for this account.')
  })
})

describe('"sends" are the sends to real recipients that this account had accepted', () => {
  test('rules 3 and 4 count per account: another account neither uses the hour, nor proves the country, nor shares a block', async () => {
    const h = await signedIn({ new_country_per_hour: 2 })
    await h.server.admin.createAccount('acme')
    await h.server.admin.addCredits(100, 'acme')
    const acme = (await h.server.admin.createKey({ account: 'acme' })).key
    // Rule 3: acme's two UZ sends leave default's two.
    for (const i of [1, 2]) expect((await h.send({ channel: 'sms', recipient: uz(i) }, acme)).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(3) }, acme)).status).toBe(429)
    for (const i of [4, 5]) expect((await h.send({ channel: 'sms', recipient: uz(i) })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(6) })).status).toBe(429)
    // An approval proves the country for its own account only.
    h.clock.advance(HOUR)
    const sent = await h.send({ channel: 'sms', recipient: uz(7), code: '424242' })
    expect((await h.verify({ verification_id: sent.json.verification_id, code: '424242' })).json.verified).toBe(true)
    await sendAccepted(h, 5, 10)
    expect((await h.send({ channel: 'sms', recipient: uz(20) }, acme)).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(21) }, acme)).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(22) }, acme)).status).toBe(429)
    // Rule 4: default's 20 unapproved sends block default's scopes, not acme's.
    h.clock.advance(DAY)
    await sendAccepted(h, 20, 100)
    h.clock.advance(GRACE)
    expect((await h.send({ channel: 'sms', recipient: uz(1) })).json.error).toBe(PUMPING(900))
    expect((await h.send({ channel: 'sms', recipient: uz(1) }, acme)).status).toBe(200)
    expect((await h.server.fraud.status('acme')).blocks).toEqual([])
    expect((await h.server.fraud.status('default')).blocks.map((b) => b.scope)).toEqual(['UZ', '+99890123'])
  })

  test('a send refused by credits (402) or by a per-recipient limit was not accepted: it counts toward no rule', async () => {
    const h = await signedIn({ new_country_per_hour: 2 }, { credits: 0, config: { limits: { key_requests_per_minute: 1000, recipient_per_minute: 1 } } })
    for (let i = 0; i < 5; i++) expect((await h.send({ channel: 'sms', recipient: uz(i) })).status).toBe(402)
    await h.server.admin.addCredits(10)
    expect((await h.send({ channel: 'sms', recipient: uz(10) })).status).toBe(200)
    for (let i = 0; i < 3; i++)
      expect((await h.send({ channel: 'sms', recipient: uz(10) })).json.error).toStartWith('Rate limit exceeded: Maximum 1 verification codes per minute')
    // Rule 3 has counted one send: the second of the hour goes, the third is refused.
    expect((await h.send({ channel: 'sms', recipient: uz(11) })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(12) })).json.error).toStartWith('Sending to this destination is temporarily blocked')
  })

  test('a send refused by the guard counts toward no rule: not rule 4 (nor rule 2, nor rule 3)', async () => {
    const h = await signedIn({ ip_per_hour: 1 })
    await approve(h, uz2(1))
    h.clock.advance(DAY)
    await sendAccepted(h, 18)
    await sendAccepted(h, 1, 200, uz, { ip: '198.51.100.9' })
    // Five sends to the prefix refused by rule 2.
    for (let i = 0; i < 5; i++)
      expect((await h.send({ channel: 'sms', recipient: uz(300 + i), ip: '198.51.100.9' })).json.error).toStartWith(IP_LIMIT(0).slice(0, 60))
    h.clock.advance(GRACE)
    // 19 sends, not 24: no evidence yet.
    expect((await h.send({ channel: 'sms', recipient: uz(1) })).status).toBe(200)
    h.clock.advance(GRACE)
    // That one makes 20 once it is past the grace period.
    expect((await h.send({ channel: 'sms', recipient: uz(2) })).json.error).toBe(PUMPING(900))
  })
})
