/**
 * Brute-force bound (docs/api.md#hardening, docs/api.md#lockout) with the default
 * limits: an attacker who keeps requesting fresh codes for one recipient and
 * spends 5 guesses on each (never tripping the per-verification lockout) gets
 * exactly 100 guesses compared per rolling 24 hours, sequentially or in
 * parallel. With 6-digit codes that bounds the chance of a hit at 100 / 10^6
 * = 0.01 % a day (1 % with 4 digits).
 */
import { expect, test } from 'bun:test'
import { DAY, harnessPerTest, MINUTE } from '../kit/harness.ts'

const start = harnessPerTest()

const LOCKED = 'Too many failed attempts. Please try again in 15 minutes or request a new code.'
const RECIPIENT = '+14155550123'
/** A wrong guess for a code we chose ourselves. */
const guess = (i: number) => String(100000 + (i % 800000))
const CODE = '999999'

test('fresh codes every 4 minutes, 5 guesses each: exactly 100 guesses are compared in 24 hours, then every code of the recipient is locked and no new one is sold', async () => {
  const h = await start({ credits: 1000 })
  const t0 = h.clock.now()
  let compared = 0
  let locked = 0
  let sends = 0
  let refused = 0
  let newest = ''
  for (let v = 0; v < 30; v++) {
    const sent = await h.send({ channel: 'sms', recipient: RECIPIENT, code: CODE, expires_in: 3600 })
    if (sent.status === 200) {
      // 4 minutes apart: within 2/minute and 15/hour
      newest = sent.json.verification_id
      sends++
    } else {
      // Once the cap holds, send sells no code that could not be verified (docs/api.md#hardening):
      // the attacker guesses on at the newest code it has.
      expect(sent.status).toBe(429)
      expect(sent.json.error).toStartWith('Rate limit exceeded: too many failed attempts for this recipient.')
      refused++
    }
    for (let g = 0; g < 5; g++) {
      const r = await h.verify({ verification_id: newest, code: guess(v * 5 + g) })
      if (r.status === 200) {
        expect(r.json.message).toBe('Invalid code')
        compared++
      } else {
        expect(r.status).toBe(429)
        expect(r.json.message).toBe(LOCKED)
        locked++
      }
    }
    h.clock.advance(4 * MINUTE)
  }
  expect(sends).toBe(20)
  expect(refused).toBe(10)
  expect(compared).toBe(100)
  expect(locked).toBe(50)
  expect(h.delivery.sent).toHaveLength(20)
  // Even the right code of the newest verification is refused until the window has room,
  // and retry_after says when: 24 h after the first failure; send refuses with the same wait.
  const wait = Math.ceil((t0 + DAY - h.clock.now()) / 1000)
  const r = await h.verify({ verification_id: newest, code: CODE })
  expect(r.status).toBe(429)
  expect(r.json.retry_after).toBe(wait)
  const fresh = await h.send({ channel: 'sms', recipient: RECIPIENT, code: CODE })
  expect(fresh.status).toBe(429)
  expect(fresh.json.retry_after).toBe(wait)
  // Once the oldest failures leave the window, guessing resumes at the pace they leave.
  h.clock.set(t0 + DAY)
  const later = await h.send({ channel: 'sms', recipient: RECIPIENT, code: CODE })
  expect((await h.verify({ verification_id: later.json.verification_id, code: CODE })).json.verified).toBe(true)
})

test('300 parallel wrong guesses over 60 verifications of one recipient: exactly 100 are compared', async () => {
  const h = await start({
    credits: 1000,
    config: { limits: { recipient_per_minute: 1000, recipient_per_hour: 1000, recipient_per_day: 1000, key_requests_per_minute: 10_000 } },
  })
  const ids: string[] = []
  for (let v = 0; v < 60; v++) ids.push((await h.send({ channel: 'sms', recipient: RECIPIENT, code: CODE })).json.verification_id)
  const rs = await Promise.all(Array.from({ length: 300 }, (_, i) => h.verify({ verification_id: ids[i % 60]!, code: guess(i) })))
  expect(rs.filter((r) => r.status === 200 && r.json.message === 'Invalid code')).toHaveLength(100)
  expect(rs.filter((r) => r.status === 429 && r.json.message === LOCKED)).toHaveLength(200)
})
