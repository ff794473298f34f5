import { expect, test } from 'bun:test'
import { harnessPerTest, TEST, UUID_V4 } from '../kit/harness.ts'

const start = harnessPerTest()

test('a send to a test recipient can be verified with 123456', async () => {
  const h = await start()
  const sent = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  expect(sent.status).toBe(200)
  expect(sent.json.verification_id).toMatch(UUID_V4)
  const ok = await h.verify({ verification_id: sent.json.verification_id, code: '123456' })
  expect(ok.json).toEqual({ success: true, verified: true, message: 'Code verified successfully', request_id: ok.headers.get('x-request-id') })
})

test('a real send delivers a code that verifies', async () => {
  const h = await start({ credits: 1 })
  const sent = await h.send({ channel: 'email', recipient: 'ada@example.com' })
  expect(sent.status).toBe(200)
  const ok = await h.verify({ verification_id: sent.json.verification_id, code: h.delivery.lastCode() })
  expect(ok.json.verified).toBe(true)
})
