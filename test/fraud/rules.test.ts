/**
 * Fraud guard rules 1, 2, 3 and 5, the `ip` field, the order of the rules, and
 * the config (docs/api.md#fraud-guard), on the real app with an injected
 * clock. Rule 4 (conversion blocks) is in conversion.test.ts, the order and
 * the modes in order-and-modes.test.ts.
 */
import { describe, expect, test } from 'bun:test'
import { loadConfig, resolveConfig } from '../../src/app/load-config.ts'
import { destinationOf, maskPrefix } from '../../src/lib/phone-country.ts'
import { approve, balance, ca, guardedPerTest, PUMPING, refusals, sendAccepted, us, uz } from '../kit/fraud.ts'
import { DAY, HOUR, MINUTE, TEST } from '../kit/harness.ts'

const signedIn = guardedPerTest()

describe('phone numbers to countries and prefixes (libphonenumber-js metadata)', () => {
  // Titles name the country, never the number: a test run's output is scanned for clear recipients (.ci/run).
  const cases: [number: string, country: string, prefix: string][] = [
    ['+14155552671', 'US', '+1415555'],
    ['+16135550123', 'CA', '+1613555'], // +1 is shared: the metadata tells Canada from the US
    ['+18765550123', 'JM', '+1876555'],
    ['+998901234567', 'UZ', '+99890123'],
    ['+442071234567', 'GB', '+44207123'],
    ['+447911123456', 'GG', '+44791112'], // a Guernsey mobile range under +44
    ['+79161234567', 'RU', '+7916123'],
    ['+77011234567', 'KZ', '+7701123'], // +7 is shared too
    ['+3906698', 'VA', 'VA'], // 7 digits: fewer than 8, the country is the prefix
    ['+88212345678', 'ZZ', '+8821234'], // a non-geographic code
    ['+15550100001', 'ZZ', '+1555010'], // an unassigned range (a test recipient's number)
    ['+12', 'ZZ', 'ZZ'],
  ]
  cases.forEach(([n, country, prefix], i) => {
    test(`sample ${i + 1}: ${country}, its prefix ${prefix === country ? 'the country' : `of ${prefix.length - 1} digits`}`, () => {
      expect(destinationOf(n)).toEqual({ country, prefix })
    })
  })

  test('a prefix in a log keeps what a masked recipient shows (5 characters)', () => {
    expect(maskPrefix('+99890123')).toBe('+9989****')
    expect(maskPrefix('VA')).toBe('VA')
  })

  test('the prefix: the E.164 digits without the last 4 from 8 digits on; under 8 digits the country', () => {
    expect(destinationOf('+39066981')).toEqual({ country: 'VA', prefix: '+3906' }) // 8 digits
    expect(destinationOf('+3906698')).toEqual({ country: 'VA', prefix: 'VA' }) // 7 digits
    expect(destinationOf('+999999999999999')).toEqual({ country: 'ZZ', prefix: '+99999999999' }) // 15 digits
  })
})

test('the [fraud] defaults are the documented ones', () => {
  expect(resolveConfig({}).fraud).toEqual({
    mode: 'enforce',
    allowed_countries: ['*'],
    ip_per_hour: 10,
    new_country_per_hour: 10,
    conversion_grace_seconds: 600,
    min_sends: 20,
    min_conversion: 0.2,
  })
  expect(() => resolveConfig({ fraud: { allowed_countries: ['UK'] } })).toThrow("fraud.allowed_countries has 'UK', which is no country code")
  expect(() => resolveConfig({ fraud: { mode: 'loud' } })).toThrow('fraud.mode must be one of: enforce, monitor, off')
  expect(() => resolveConfig({ fraud: { min_conversion: 1.5 } })).toThrow('fraud.min_conversion must be a number from 0 to 1 (got 1.5)')
  expect(() => resolveConfig({ fraud: { threshold: 1 } })).toThrow('fraud.threshold is not a known setting')
  // The environment overlays them like every setting (lists comma-separated, fractions as numbers).
  const env = { OTPD_FRAUD__MODE: 'monitor', OTPD_FRAUD__ALLOWED_COUNTRIES: 'US, CA', OTPD_FRAUD__MIN_CONVERSION: '0.35' }
  expect(loadConfig({ env }).config.fraud).toMatchObject({ mode: 'monitor', allowed_countries: ['US', 'CA'], min_conversion: 0.35 })
})

describe('the ip field', () => {
  const IP = 'ip must be a valid IPv4 or IPv6 address'
  test.each([['nope'], [''], ['1.2.3'], ['01.2.3.4'], ['256.0.0.1'], ['fe80::1%eth0'], ['1.2.3.4 '], [null], [12], [['1.2.3.4']], [{}]])(
    '%p -> 400',
    async (ip) => {
      const h = await signedIn()
      const r = await h.send({ channel: 'sms', recipient: us(1), ip })
      expect(r.status).toBe(400)
      expect(r.json.error).toBe(IP)
    },
  )

  test('it is checked after every other field, and a valid one passes', async () => {
    const h = await signedIn()
    expect((await h.send({ channel: 'sms', recipient: us(1), code: '1', ip: 'x' })).json.error).toBe('code must be a numeric string between 4-10 digits')
    expect((await h.send({ channel: 'sms', recipient: us(1), ip: '2001:DB8::1' })).status).toBe(200)
    expect((await h.send({ channel: 'email', recipient: 'a@example.com', ip: '192.0.2.1' })).status).toBe(200)
  })
})

describe('rule 1: geo permissions', () => {
  test('a country outside fraud.allowed_countries: 403 with the code; nothing delivered or charged; email and test recipients exempt', async () => {
    const h = await signedIn({ allowed_countries: ['US'] })
    const before = await balance(h)
    const r = await h.send({ channel: 'sms', recipient: uz(1) })
    expect(r.status).toBe(403)
    expect(r.json).toEqual({ error: 'Sending to this destination country is not allowed: UZ', request_id: r.json.request_id })
    expect(r.headers.get('retry-after')).toBeNull()
    expect((await h.send({ channel: 'voice', recipient: ca(1) })).json.error).toBe('Sending to this destination country is not allowed: CA')
    expect((await h.send({ channel: 'sms', recipient: '+88212345678' })).json.error).toBe('Sending to this destination country is not allowed: ZZ')
    expect(h.delivery.sent).toHaveLength(0)
    expect(await balance(h)).toBe(before)
    expect((await h.send({ channel: 'sms', recipient: us(1) })).status).toBe(200)
    expect((await h.send({ channel: 'email', recipient: 'ann@example.uz' })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).status).toBe(200) // ZZ, but a test recipient
    expect(await refusals(h, { rule: 'geo', country: 'UZ', decision: 'refused' })).toBe(1)
    expect(await refusals(h, { rule: 'geo', country: 'ZZ', decision: 'refused' })).toBe(1)
    const text = await h.server.metrics.render()
    expect(text).toContain('otpd_sends_total{channel="sms",provider="none",outcome="fraud_blocked"} 2\n')
    expect(text).toContain('otpd_sends_total{channel="voice",provider="none",outcome="fraud_blocked"} 1\n')
    const line = h.logs.find((l) => l.includes('refused by the fraud guard'))!
    expect(line).toContain('geo')
    expect(line).toContain('+9989****')
    expect(h.logs.join('\n')).not.toContain(uz(1))
    expect(h.logs.join('\n')).not.toContain('+99890123')
  })

  test("an account's own list wins over the config's, '*' allows all, 'default' returns to the config's", async () => {
    const h = await signedIn({ allowed_countries: ['US'] })
    await h.server.fraud.setAccount('default', { allowedCountries: ['UZ', 'CA'] })
    expect((await h.send({ channel: 'sms', recipient: uz(1) })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: ca(1) })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: us(1) })).json.error).toBe('Sending to this destination country is not allowed: US')
    await h.server.fraud.setAccount('default', { allowedCountries: ['*'] })
    expect((await h.send({ channel: 'sms', recipient: us(2) })).status).toBe(200)
    await h.server.fraud.setAccount('default', { allowedCountries: null })
    expect((await h.send({ channel: 'sms', recipient: uz(2) })).status).toBe(403)
    await expect(h.server.fraud.setAccount('default', { allowedCountries: ['XQ'] })).rejects.toThrow('unknown country code XQ')
  })
})

describe('rule 2: per end-user IP', () => {
  test('10 sends per account and IP in a rolling hour, then the exact 429 with Retry-After; other IPs go on', async () => {
    const h = await signedIn({ new_country_per_hour: 1000 })
    const start = h.clock.now()
    for (let i = 0; i < 10; i++) {
      expect((await h.send({ channel: 'sms', recipient: us(i), ip: '203.0.113.7' })).status).toBe(200)
      h.clock.advance(MINUTE)
    }
    const r = await h.send({ channel: 'sms', recipient: us(99), ip: '203.0.113.7' })
    expect(r.status).toBe(429)
    const wait = Math.ceil((start + HOUR - h.clock.now()) / 1000)
    expect(r.json.error).toBe(`Rate limit exceeded: Maximum 10 verification codes per hour for this IP address. Please try again in ${wait} seconds.`)
    expect(r.json.retry_after).toBe(wait)
    expect(r.headers.get('retry-after')).toBe(String(wait))
    // The same end user written another way: an IPv4-mapped IPv6 address is the IPv4 address.
    expect((await h.send({ channel: 'sms', recipient: us(98), ip: '::ffff:203.0.113.7' })).status).toBe(429)
    expect((await h.send({ channel: 'sms', recipient: us(98), ip: '::FFFF:cb00:7107' })).status).toBe(429)
    expect((await h.send({ channel: 'sms', recipient: us(97), ip: '203.0.113.8' })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: us(96) })).status).toBe(200) // no ip: no rule 2
    // The oldest send leaves the window at start + 1 h.
    h.clock.set(start + HOUR)
    expect((await h.send({ channel: 'sms', recipient: us(95), ip: '203.0.113.7' })).status).toBe(200)
    expect(await refusals(h, { rule: 'ip', country: 'US', decision: 'refused' })).toBe(3)
  })

  test('IPv6 addresses are counted in canonical form', async () => {
    const h = await signedIn({ ip_per_hour: 2, new_country_per_hour: 1000 })
    expect((await h.send({ channel: 'sms', recipient: us(1), ip: '2001:db8::1' })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: us(2), ip: '2001:0DB8:0:0:0:0:0:1' })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: us(3), ip: '2001:db8:0::1' })).status).toBe(429)
  })

  test('IPs are per account: another account has its own count', async () => {
    const h = await signedIn({ ip_per_hour: 1, new_country_per_hour: 1000 })
    await h.server.admin.createAccount('acme')
    await h.server.admin.addCredits(10, 'acme')
    const other = (await h.server.admin.createKey({ account: 'acme' })).key
    expect((await h.send({ channel: 'sms', recipient: us(1), ip: '198.51.100.1' })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: us(2), ip: '198.51.100.1' })).status).toBe(429)
    expect((await h.send({ channel: 'sms', recipient: us(3), ip: '198.51.100.1' }, other)).status).toBe(200)
  })
})

describe('rule 3: unproven destinations', () => {
  test('a country never approved gets 10 sends an hour; the 11th is refused with the exact 429, charging nothing', async () => {
    const h = await signedIn()
    const start = h.clock.now()
    for (let i = 0; i < 10; i++) {
      expect((await h.send({ channel: 'sms', recipient: uz(i) })).status).toBe(200)
      h.clock.advance(MINUTE)
    }
    const before = await balance(h)
    const r = await h.send({ channel: 'voice', recipient: uz(50) })
    const wait = Math.ceil((start + HOUR - h.clock.now()) / 1000)
    expect(r.status).toBe(429)
    expect(r.json.error).toBe(PUMPING(wait))
    expect(r.json.retry_after).toBe(wait)
    expect(r.headers.get('retry-after')).toBe(String(wait))
    expect(await balance(h)).toBe(before)
    expect(h.delivery.sent).toHaveLength(10)
    // Another country has its own hour.
    expect((await h.send({ channel: 'sms', recipient: ca(1) })).status).toBe(200)
    h.clock.set(start + HOUR)
    expect((await h.send({ channel: 'sms', recipient: uz(51) })).status).toBe(200)
    expect(await refusals(h, { rule: 'new_country', country: 'UZ', decision: 'refused' })).toBe(1)
  })

  test('a send no provider took counts toward no rule (an outage is not pumping)', async () => {
    const h = await signedIn({ new_country_per_hour: 1 })
    h.delivery.fail = true
    for (let i = 0; i < 3; i++) expect((await h.send({ channel: 'sms', recipient: uz(i) })).status).toBe(500)
    h.delivery.fail = false
    expect((await h.send({ channel: 'sms', recipient: uz(9) })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(8) })).status).toBe(429)
  })

  test('an approval proves the country for 30 days', async () => {
    const h = await signedIn()
    await approve(h, uz(0))
    for (let i = 1; i <= 15; i++) expect((await h.send({ channel: 'sms', recipient: uz(i) })).status).toBe(200)
    h.clock.advance(30 * DAY) // the approval is 30 days old: unproven again
    for (let i = 16; i < 26; i++) expect((await h.send({ channel: 'sms', recipient: uz(i) })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(26) })).status).toBe(429)
  })

  test('a refused send counts toward nothing: not rule 3, not the per-recipient limits', async () => {
    const h = await signedIn({ new_country_per_hour: 1 }, { config: { limits: { key_requests_per_minute: 1000, recipient_per_minute: 1 } } })
    expect((await h.send({ channel: 'sms', recipient: uz(1) })).status).toBe(200)
    for (let i = 0; i < 5; i++) expect((await h.send({ channel: 'sms', recipient: uz(2) })).status).toBe(429)
    h.clock.advance(HOUR)
    // uz(2) was never sent: its per-minute limit has room, and rule 3 counted one send only.
    expect((await h.send({ channel: 'sms', recipient: uz(2) })).status).toBe(200)
  })

  test('an approval 30 days less 1 ms old still proves the country; 30 days old, not', async () => {
    const h = await signedIn({ new_country_per_hour: 1 })
    await approve(h, uz(0))
    h.clock.advance(30 * DAY - 1)
    await sendAccepted(h, 3)
    // Exactly 30 days: unproven again, and the hour already holds those 3 sends.
    h.clock.advance(1)
    expect((await h.send({ channel: 'sms', recipient: uz(9) })).status).toBe(429)
  })
})

describe('rule 5: daily credit cap', () => {
  test('at most N debits (every channel) in a rolling 24 h, refunds not counted; the exact 429; applies in every mode', async () => {
    for (const mode of ['enforce', 'monitor', 'off']) {
      const h = await signedIn({ mode })
      await h.server.fraud.setAccount('default', { dailyCreditLimit: 3 })
      const start = h.clock.now()
      expect((await h.send({ channel: 'sms', recipient: us(1) })).status).toBe(200)
      h.clock.advance(HOUR)
      h.delivery.fail = true
      expect((await h.send({ channel: 'email', recipient: 'a@example.com' })).status).toBe(500) // refunded: not counted
      h.delivery.fail = false
      expect((await h.send({ channel: 'email', recipient: 'a@example.com' })).status).toBe(200)
      expect((await h.send({ channel: 'voice', recipient: us(2) })).status).toBe(200)
      expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).status).toBe(200) // no debit
      const before = await balance(h)
      const r = await h.send({ channel: 'email', recipient: 'b@example.com' })
      const wait = Math.ceil((start + DAY - h.clock.now()) / 1000)
      expect(r.status).toBe(429)
      expect(r.json.error).toBe(`Daily credit limit of 3 reached for this account. Please try again in ${wait} seconds.`)
      expect(r.json.retry_after).toBe(wait)
      expect(r.headers.get('retry-after')).toBe(String(wait))
      expect(await balance(h)).toBe(before)
      expect(await refusals(h, { rule: 'daily_credit', country: 'none', decision: 'refused' })).toBe(1)
      h.clock.set(start + DAY)
      expect((await h.send({ channel: 'email', recipient: 'b@example.com' })).status).toBe(200)
      await h.server.fraud.setAccount('default', { dailyCreditLimit: null })
      for (let i = 0; i < 3; i++) expect((await h.send({ channel: 'email', recipient: `c${i}@example.com` })).status).toBe(200)
      h.close()
    }
  })
})

test('the sweep drops guard sends older than 24 h (its longest window)', async () => {
  const h = await signedIn()
  expect((await h.send({ channel: 'sms', recipient: us(1) })).status).toBe(200)
  const rows = async () => Number((await h.sql('SELECT count(*) AS n FROM fraud_sends'))[0]!.n)
  expect(await rows()).toBe(1)
  h.clock.advance(DAY - 1)
  expect((await h.server.sweep()).fraudSends).toBe(0)
  h.clock.advance(1)
  expect((await h.server.sweep()).fraudSends).toBe(1)
  expect(await rows()).toBe(0)
})
