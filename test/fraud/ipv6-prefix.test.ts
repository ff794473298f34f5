/**
 * Fraud guard rule 2 counts an IPv6 address as its /64 network, an
 * IPv4-mapped IPv6 address as its IPv4 address, and an IPv4 address as
 * itself (docs/api.md#fraud-guard).
 */
import { describe, expect, test } from 'bun:test'
import { canonicalIp } from '../../src/http/validate.ts'
import { ipScope } from '../../src/otp/fraud.ts'
import { HOUR, MINUTE } from '../kit/harness.ts'
import { guardedPerTest, us } from '../kit/fraud.ts'

const signedIn = guardedPerTest()

const ipLimited = (s: number) => `Rate limit exceeded: Maximum 2 verification codes per hour for this IP address. Please try again in ${s} seconds.`

describe('what an address counts as', () => {
  test.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:cb00:7107', '203.0.113.7'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:0DB8:0000:0000:FFFF:FFFF:FFFF:FFFF', '2001:db8:0:0::/64'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::', '2001:db8:1:2::/64'],
    ['2001:db8:1::2:3:4', '2001:db8:1:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['fe80::1', 'fe80:0:0:0::/64'],
    ['2001:db8:1:2:3:4:192.0.2.1', '2001:db8:1:2::/64'],
  ])('%s counts as %s', (written, counted) => {
    expect(ipScope(canonicalIp(written)!)).toBe(counted)
  })
})

describe('rule 2 over a /64', () => {
  test('addresses of one /64 share the hour, written any way; another /64 has its own', async () => {
    const h = await signedIn({ ip_per_hour: 2, new_country_per_hour: 1000 })
    const start = h.clock.now()
    expect((await h.send({ channel: 'sms', recipient: us(1), ip: '2001:db8:1:2::1' })).status).toBe(200)
    h.clock.advance(MINUTE)
    expect((await h.send({ channel: 'sms', recipient: us(2), ip: '2001:db8:1:2:ffff:ffff:ffff:fffe' })).status).toBe(200)
    const r = await h.send({ channel: 'sms', recipient: us(3), ip: '2001:DB8:0001:0002:0:0:0:9' })
    const wait = Math.ceil((start + HOUR - h.clock.now()) / 1000)
    expect(r.status).toBe(429)
    expect(r.json.error).toBe(ipLimited(wait))
    expect(r.json.retry_after).toBe(wait)
    expect(r.headers.get('retry-after')).toBe(String(wait))
    // The neighbouring /64s, and the same host bits in another /64, are other end users.
    expect((await h.send({ channel: 'sms', recipient: us(4), ip: '2001:db8:1:3::1' })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: us(5), ip: '2001:db8:1:1::1' })).status).toBe(200)
    expect(h.delivery.sent).toHaveLength(4)
    // The oldest send of the /64 leaves the hour: one more fits.
    h.clock.set(start + HOUR)
    expect((await h.send({ channel: 'sms', recipient: us(6), ip: '2001:db8:1:2:abcd::7' })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: us(7), ip: '2001:db8:1:2::8' })).json.error).toBe(ipLimited(60))
  })

  test('the attack as the review ran it: 12 sends from 12 addresses of one /64 at the default 10 an hour; the last 2 are refused', async () => {
    const h = await signedIn({ new_country_per_hour: 1000 })
    const statuses: number[] = []
    for (let i = 1; i <= 12; i++) statuses.push((await h.send({ channel: 'sms', recipient: us(100 + i), ip: `2001:db8:7:9::${i.toString(16)}` })).status)
    expect(statuses).toEqual([...Array(10).fill(200), 429, 429])
    expect(h.delivery.sent).toHaveLength(10)
  })

  test('an IPv4-mapped address still counts as its IPv4 address, never as a /64', async () => {
    const h = await signedIn({ ip_per_hour: 2, new_country_per_hour: 1000 })
    expect((await h.send({ channel: 'sms', recipient: us(1), ip: '::ffff:198.51.100.9' })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: us(2), ip: '198.51.100.9' })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: us(3), ip: '::ffff:c633:6409' })).status).toBe(429)
    // Another IPv4 address in the mapped range is another end user.
    expect((await h.send({ channel: 'sms', recipient: us(4), ip: '::ffff:198.51.100.10' })).status).toBe(200)
  })
})
