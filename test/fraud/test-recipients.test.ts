/**
 * Test recipients and the fraud guard's account settings (EXTENSIONS.md
 * section 5, DECISIONS.md section 6 as clarified): `--test-recipients off`
 * makes the five behave like any other recipient; with the default, the
 * recipient failure cap never applies to them.
 */
import { afterEach, expect, test } from 'bun:test'
import { balance, guarded } from '../kit/fraud.ts'
import { createHarness, MINUTE, TEST, type Harness } from '../kit/harness.ts'

let h: Harness | undefined
afterEach(() => {
  h?.close()
  h = undefined
})

const LOCKED = 'Too many failed attempts. Please try again in 15 minutes or request a new code.'

test('test recipients off: charged and delivered like real ones, with a random code; on again: the short-circuit is back', async () => {
  h = await guarded()
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
  h = await createHarness()
  await h.server.fraud.setAccount('default', { testRecipients: false })
  expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).status).toBe(402)
  await h.server.fraud.setAccount('default', { testRecipients: true })
  expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).status).toBe(200)
})

test('200 wrong codes to the FAIL phone (5 on each of 40 verifications) never produce the recipient-cap 429', async () => {
  h = await createHarness()
  for (let v = 0; v < 40; v++) {
    const sent = await h.send({ channel: 'sms', recipient: TEST.PHONE_FAIL })
    expect(sent.status).toBe(200)
    for (let g = 0; g < 5; g++) {
      const r = await h.verify({ verification_id: sent.json.verification_id, code: String(100000 + v * 5 + g) })
      // The first wrong code of every new verification (and the 4 after it) is compared.
      expect(r.status).toBe(200)
      expect(r.json.message).toBe('Invalid code')
    }
    // Its own lockout still applies (DECISIONS.md section 4): the 6th attempt is locked.
    const locked = await h.verify({ verification_id: sent.json.verification_id, code: '123456' })
    expect(locked.status).toBe(429)
    expect(locked.json.message).toBe(LOCKED)
    expect(locked.json.retry_after).toBe(900)
    h.clock.advance(MINUTE) // within the per-key 120 requests a minute
  }
  // A real recipient still meets the cap (100 failures in 24 h by default).
})
