import { afterEach, expect, test } from 'bun:test'
import { createHarness, TEST, UUID_V4, type Harness } from '../kit/harness.ts'

let h: Harness
afterEach(() => h?.close())

test('a send to a test recipient can be verified with 123456', async () => {
  h = await createHarness()
  const sent = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  expect(sent.status).toBe(200)
  expect(sent.json.verification_id).toMatch(UUID_V4)
  const ok = await h.verify({ verification_id: sent.json.verification_id, code: '123456' })
  expect(ok.json).toEqual({ success: true, verified: true, message: 'Code verified successfully', request_id: ok.headers.get('x-request-id') })
})

test('a real send delivers a code that verifies', async () => {
  h = await createHarness({ credits: 1 })
  const sent = await h.send({ channel: 'email', recipient: 'ada@example.com' })
  expect(sent.status).toBe(200)
  const ok = await h.verify({ verification_id: sent.json.verification_id, code: h.delivery.lastCode() })
  expect(ok.json.verified).toBe(true)
})
