/**
 * Test recipients and the fraud guard (docs/api.md#fraud-guard,
 * docs/api.md#test-recipients): they pass every rule and count toward none;
 * `--test-recipients off` makes the five behave like any other recipient;
 * with the default, the recipient failure cap never applies to them.
 */
import { expect, test } from 'bun:test'
import { balance, guardedPerTest, refusals, us } from '../kit/fraud.ts'
import { harnessPerTest, MINUTE, TEST } from '../kit/harness.ts'

const start = harnessPerTest()
const signedIn = guardedPerTest()

const LOCKED = 'Too many failed attempts. Please try again in 15 minutes or request a new code.'

test('test recipients off: charged and delivered like real ones, with a random code; on again: the short-circuit is back', async () => {
  const h = await signedIn()
  await h.server.fraud.setAccount('default', { testRecipients: false })
  const before = await balance(h)
  for (const [channel, recipient] of [
    ['sms', TEST.PHONE_SUCCESS],
    ['sms', TEST.PHONE_FAIL],
    ['sms', TEST.PHONE_EXPIRED],
    ['email', TEST.EMAIL_SUCCESS],
    ['email', TEST.EMAIL_FAIL],
  ] as const) {
    const r = await h.send({ channel, recipient })
    expect(r.status).toBe(200)
    const delivered = h.delivery.sent.at(-1)!
    expect(delivered.recipient).toBe(recipient)
    const code = h.delivery.lastCode()
    // Not the fixed code: a real code that passes only with the message. (EXPIRED is not created expired.)
    if (code !== '123456') expect((await h.verify({ verification_id: r.json.verification_id, code: '123456' })).json.message).toBe('Invalid code')
    expect((await h.verify({ verification_id: r.json.verification_id, code })).json.message).toBe('Code verified successfully')
  }
  expect(h.delivery.sent).toHaveLength(5)
  expect(await balance(h)).toBe(before - 5)
  // And they meet the fraud guard like any number (+1555 0100... is no assigned range: ZZ).
  await h.server.fraud.setAccount('default', { allowedCountries: ['US'] })
  expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).json.error).toBe('Sending to this destination country is not allowed: ZZ')
  await h.server.fraud.setAccount('default', { testRecipients: true })
  const t = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  expect(t.status).toBe(200)
  expect(h.delivery.sent).toHaveLength(5)
  expect((await h.verify({ verification_id: t.json.verification_id, code: '123456' })).json.verified).toBe(true)
})

test('test recipients off with a balance of 0: 402 like any recipient', async () => {
  const h = await start()
  await h.server.fraud.setAccount('default', { testRecipients: false })
  expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).status).toBe(402)
  await h.server.fraud.setAccount('default', { testRecipients: true })
  expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).status).toBe(200)
})

test('200 wrong codes to the FAIL phone (5 on each of 40 verifications) never produce the recipient-cap 429', async () => {
  const h = await start()
  for (let v = 0; v < 40; v++) {
    const sent = await h.send({ channel: 'sms', recipient: TEST.PHONE_FAIL })
    expect(sent.status).toBe(200)
    for (let g = 0; g < 5; g++) {
      const r = await h.verify({ verification_id: sent.json.verification_id, code: String(100000 + v * 5 + g) })
      // The first wrong code of every new verification (and the 4 after it) is compared.
      expect(r.status).toBe(200)
      expect(r.json.message).toBe('Invalid code')
    }
    // Its own lockout still applies (docs/api.md#lockout): the 6th attempt is locked.
    const locked = await h.verify({ verification_id: sent.json.verification_id, code: '123456' })
    expect(locked.status).toBe(429)
    expect(locked.json.message).toBe(LOCKED)
    expect(locked.json.retry_after).toBe(900)
    h.clock.advance(MINUTE) // within the per-key 120 requests a minute
  }
  // A real recipient still meets the cap (100 failures in 24 h by default).
})

test('test recipients pass every rule, even with each one saturated, and count toward none', async () => {
  const h = await signedIn({ allowed_countries: ['US'], ip_per_hour: 1, new_country_per_hour: 1 })
  await h.server.fraud.setAccount('default', { dailyCreditLimit: 1 })
  expect((await h.send({ channel: 'sms', recipient: us(1), ip: '192.0.2.1' })).status).toBe(200)
  // Rule 1 (a test phone is ZZ), rule 2 (the IP is full), rule 3 (US is full), rule 5 (the cap is reached).
  expect((await h.send({ channel: 'sms', recipient: us(2) })).status).toBe(429)
  for (const [channel, recipient] of [
    ['sms', TEST.PHONE_SUCCESS],
    ['voice', TEST.PHONE_FAIL],
    ['sms', TEST.PHONE_EXPIRED],
    ['email', TEST.EMAIL_SUCCESS],
  ] as const) {
    expect((await h.send({ channel, recipient, ip: '192.0.2.1' })).status).toBe(200)
  }
  expect(Number((await h.sql('SELECT count(*) AS n FROM fraud_sends'))[0]!.n)).toBe(1)
  expect(await refusals(h, { rule: 'geo', country: 'ZZ', decision: 'refused' })).toBe(0)
})

test('the recipient failure cap spares the test recipients, and applies to them again with --test-recipients off', async () => {
  const h = await signedIn({}, { config: { limits: { key_requests_per_minute: 1000, recipient_failures_per_day: 3 } } })
  let last = ''
  const failures = async (recipient: string, n: number) => {
    const sent = await h.send({ channel: 'sms', recipient })
    expect(sent.status).toBe(200)
    last = sent.json.verification_id
    const wrong = h.delivery.sent.length > 0 && h.delivery.lastCode() === '000000' ? '111111' : '000000'
    const answers: string[] = []
    for (let i = 0; i < n; i++) answers.push((await h.verify({ verification_id: sent.json.verification_id, code: wrong })).json.message)
    return answers
  }
  // Default: 3 failures on two verifications each, every one compared.
  expect(await failures(TEST.PHONE_SUCCESS, 3)).toEqual(['Invalid code', 'Invalid code', 'Invalid code'])
  expect(await failures(TEST.PHONE_SUCCESS, 1)).toEqual(['Invalid code'])
  // Off: the number is a recipient like any other, whose failures count toward the cap.
  await h.server.fraud.setAccount('default', { testRecipients: false, allowedCountries: ['*'] })
  expect(await failures(TEST.PHONE_SUCCESS, 3)).toEqual(['Invalid code', 'Invalid code', 'Invalid code'])
  const locked = await h.verify({ verification_id: last, code: '000000' })
  expect(locked.json.message).toBe('Too many failed attempts. Please try again in 15 minutes or request a new code.')
  // Capped: send sells it no new code either (docs/api.md#hardening).
  const capped = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  expect(capped.status).toBe(429)
  expect(capped.json.error).toBe(`Rate limit exceeded: too many failed attempts for this recipient. Please try again in ${24 * 3600} seconds.`)
})
