/**
 * The TypeBox models describe what the API really does: every kind of response
 * matches its schema exactly (no missing or extra field), and the composite
 * request schemas accept what the validator accepts. The OpenAPI document is
 * built from these same schemas (openapi.test.ts).
 */
import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { expect, test } from 'bun:test'
import { ErrorResponse, LockoutResponse, SendBody, SendResponse, VerifyBody, VerifyResponse } from '../../src/http/models.ts'
import { validateSend, validateVerify } from '../../src/http/validate.ts'
import { harnessPerTest, TEST } from '../kit/harness.ts'

const start = harnessPerTest()

function expectShape(schema: TSchema, body: unknown) {
  expect([...Value.Errors(schema, body)].map((e) => `${e.path} ${e.message}`)).toEqual([])
}

test('send success, verify results, errors and the lockout each match their schema', async () => {
  const h = await start({ config: { limits: { key_requests_per_minute: 40 } } })
  const sent = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  expectShape(SendResponse, sent.json)
  const id = sent.json.verification_id
  for (let i = 0; i < 5; i++) expectShape(VerifyResponse, (await h.verify({ verification_id: id, code: '000000' })).json)
  const locked = await h.verify({ verification_id: id, code: '123456' })
  expect(locked.status).toBe(429)
  expectShape(LockoutResponse, locked.json)

  const expired = await h.send({ channel: 'sms', recipient: TEST.PHONE_EXPIRED })
  expectShape(VerifyResponse, (await h.verify({ verification_id: expired.json.verification_id, code: '123456' })).json)

  for (const r of [
    await h.send({ channel: 'fax', recipient: 'x' }), // 400
    await h.send({ channel: 'sms', recipient: '+14155550123' }), // 402
    await h.verify({ verification_id: 'nope', code: '123456' }), // 404
    await h.call('/api/v1/nope', {}), // 404 route
    await h.call('/api/v1/send', undefined, { method: 'GET' }), // 405
    await h.call('/api/v1/send', {}, { key: null }), // 401
  ]) {
    expect(r.status).toBeGreaterThanOrEqual(400)
    expectShape(ErrorResponse, r.json)
  }
})

test('a rate-limit error matches the error schema, with retry_after', async () => {
  const h = await start({ config: { limits: { key_requests_per_minute: 1 } } })
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  const limited = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  expect(limited.status).toBe(429)
  expectShape(ErrorResponse, limited.json)
  expect(limited.json.retry_after).toBe(60)
})

// The composite schema cannot say "recipient format depends on channel"; rows
// here agree on everything else, field by field. Titles give the row number,
// not the body: a test run's output holds no recipient or code (.ci/run scans it).
test.each([
  [{ channel: 'sms', recipient: '+14155550123' }, true],
  [{ channel: 'email', recipient: 'a@b.io', message: 'Code: {code}', subject: 'Hi', expires_in: 600, code: '1234' }, true],
  [{ channel: 'voice', recipient: '+14155550123', extra: 'ignored' }, true],
  [{ channel: 'fax', recipient: '+14155550123' }, false],
  [{ channel: 'sms', recipient: '14155550123' }, false],
  [{ channel: 'sms', recipient: '+14155550123', message: 'no placeholder' }, false],
  [{ channel: 'sms', recipient: '+14155550123', message: 'x'.repeat(1601) + '{code}' }, false],
  [{ channel: 'sms', recipient: '+14155550123', subject: 'two\nlines' }, false],
  [{ channel: 'sms', recipient: '+14155550123', expires_in: '300' }, false],
  [{ channel: 'sms', recipient: '+14155550123', expires_in: 59 }, false],
  [{ channel: 'sms', recipient: '+14155550123', code: '123' }, false],
])('SendBody and the validator agree on row %#', (body, valid) => {
  expect(validateSend(body).ok).toBe(valid)
  expect(Value.Check(SendBody, body)).toBe(valid)
})

test.each([
  [{ verification_id: 'x', code: '1234' }, true],
  [{ verification_id: 1, code: '1234' }, false],
  [{ verification_id: 'x' }, false],
  [{ verification_id: 'x', code: '12345678901' }, false],
  [{ verification_id: 'x', code: 1234 }, false],
])('VerifyBody and the validator agree on row %#', (body, valid) => {
  expect(validateVerify(body).ok).toBe(valid)
  expect(Value.Check(VerifyBody, body)).toBe(valid)
})
