/** DECISIONS.md section 9: masked recipients, no keys or codes in logs, 500s without internals. */
import { afterEach, expect, test } from 'bun:test'
import { maskRecipient } from '../src/lib/mask.ts'
import { createHarness, TEST, type Harness } from './harness.ts'

let h: Harness
afterEach(() => h?.close())

// The title shows the masked form only: a test run's output holds no clear recipient (.ci/run scans it).
test.each([
  ['+1555****001', '+15550100001'],
  ['+4420*****750', '+442071838750'],
  ['s*****s@otpd.test', 'success@otpd.test'],
  ['**@example.com', 'ab@example.com'],
  ['*@example.com', 'a@example.com'],
  ['+1***', '+1234'],
])('maskRecipient gives %s', (masked, clear) => {
  expect(maskRecipient(clear)).toBe(masked)
})

test('after sends, verifies and a failed delivery the log holds no key, code or clear recipient', async () => {
  h = createHarness({ credits: 10 })
  const real = '+14155550123'
  const sent = await h.send({ channel: 'sms', recipient: real })
  const code = h.delivery.lastCode()
  await h.verify({ verification_id: sent.json.verification_id, code: code === '000000' ? '111111' : '000000' })
  await h.verify({ verification_id: sent.json.verification_id, code })
  await h.send({ channel: 'email', recipient: 'grace.hopper@example.com' })
  const emailCode = h.delivery.lastCode()
  h.delivery.fail = true
  const failed = await h.send({ channel: 'sms', recipient: '+14155550999', code: '987654' })
  expect(failed.status).toBe(500)
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })

  const all = h.logs.join('\n')
  expect(all).toContain(failed.json.request_id) // the failure is logged with its request id
  expect(all).toContain('+1415****999') // ...and the recipient, masked
  for (const secret of [h.key, code, emailCode, '987654', real, '+14155550999', 'grace.hopper@example.com']) {
    expect(all).not.toContain(secret)
  }
})

test('an internal fault in verify is a generic 500; the cause is logged with the request id', async () => {
  h = createHarness()
  h.server.db.$client.run('PRAGMA query_only = ON') // every write now throws (a closed handle no longer does: statements are prepared once)
  const r = await h.verify({ verification_id: '00000000-0000-4000-8000-000000000000', code: '123456' })
  expect(r.status).toBe(500)
  expect(r.json).toEqual({ error: 'Internal server error', request_id: r.headers.get('x-request-id') })
  const line = h.logs.find((l) => l.includes(r.json.request_id))
  expect(line).toBeDefined()
  expect(line).toContain('"level":"error"')
  expect(line!.toLowerCase()).toContain('database')
})

test('an internal fault in send is 500 Failed to send verification, without internals', async () => {
  h = createHarness()
  h.server.db.$client.run('PRAGMA query_only = ON')
  const r = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  expect(r.status).toBe(500)
  expect(r.json).toEqual({ error: 'Failed to send verification', request_id: r.headers.get('x-request-id') })
})
