/**
 * Send (docs/api.md#send-a-code, docs/api.md#credits): the success response, what
 * reaches the delivery provider, code lengths, credits and delivery failure.
 * Per-recipient limits are in send-recipient-limits.test.ts.
 */
import { expect, test } from 'bun:test'
import { harnessPerTest, TEST, UUID_V4 } from '../kit/harness.ts'

const start = harnessPerTest()

const PHONE = '+14155550123'
const NO_CREDITS = 'Insufficient credits. Please purchase more credits.'

test('success: exactly success, verification_id (v4, lower case), expires_at and request_id', async () => {
  const h = await start({ credits: 2 })
  h.clock.advance(1234) // a time with milliseconds, to see them printed
  const created = h.clock.now()
  const r = await h.send({ channel: 'sms', recipient: PHONE, expires_in: 600 })
  expect(r.status).toBe(200)
  expect(Object.keys(r.json).sort()).toEqual(['expires_at', 'request_id', 'success', 'verification_id'])
  expect(r.json.success).toBe(true)
  expect(r.json.verification_id).toMatch(UUID_V4)
  expect(r.json.expires_at).toBe(new Date(created + 600_000).toISOString())
  expect(r.json.expires_at).toBe('2026-01-01T12:10:01.234Z')
  expect(r.json.request_id).toMatch(UUID_V4)
  expect(r.headers.get('x-request-id')).toBe(r.json.request_id)
  expect(r.headers.get('content-type')).toStartWith('application/json')

  const again = await h.send({ channel: 'sms', recipient: PHONE, expires_in: 600 })
  expect(again.json.verification_id).not.toBe(r.json.verification_id)
  expect(again.json.request_id).not.toBe(r.json.request_id)
})

test('expires_in defaults to 300 seconds', async () => {
  const h = await start({ credits: 1 })
  const r = await h.send({ channel: 'email', recipient: 'ada@example.com' })
  expect(r.json.expires_at).toBe(new Date(h.clock.now() + 300_000).toISOString())
})

test('the code works until just before expires_at and is expired at it', async () => {
  const h = await start({ credits: 2 })
  const a = await h.send({ channel: 'sms', recipient: PHONE, expires_in: 60, code: '1111' })
  const b = await h.send({ channel: 'sms', recipient: PHONE, expires_in: 60, code: '2222' })
  h.clock.advance(59_999)
  expect((await h.verify({ verification_id: a.json.verification_id, code: '1111' })).json.message).toBe('Code verified successfully')
  h.clock.advance(1)
  expect((await h.verify({ verification_id: b.json.verification_id, code: '2222' })).json).toMatchObject({ verified: false, message: 'Code expired' })
})

test('default message and subject reach the delivery', async () => {
  const h = await start({ credits: 1 })
  const r = await h.send({ channel: 'email', recipient: 'ada@example.com' })
  expect(h.delivery.sent).toHaveLength(1)
  const m = h.delivery.sent[0]!
  expect(m.text).toMatch(/^Your verification code is: \d{6}$/)
  expect(m).toMatchObject({ channel: 'email', recipient: 'ada@example.com', subject: 'Your Verification Code', verificationId: r.json.verification_id })
  expect(new Date(m.expiresAt).toISOString()).toBe(r.json.expires_at)
})

test('a custom template has every {code} replaced; a custom subject is delivered', async () => {
  const h = await start({ credits: 1 })
  await h.send({ channel: 'email', recipient: 'ada@example.com', message: '{code} is your code. Again: {code}.', subject: 'Sign-in code', code: '2468' })
  expect(h.delivery.sent[0]).toMatchObject({ text: '2468 is your code. Again: 2468.', subject: 'Sign-in code' })
})

test('voice reads the code digit by digit; sms does not', async () => {
  const h = await start({ credits: 2 })
  await h.send({ channel: 'voice', recipient: PHONE, code: '123456' })
  await h.send({ channel: 'sms', recipient: '+14155550124', code: '123456' })
  expect(h.delivery.sent.map((m) => [m.channel, m.text])).toEqual([
    ['voice', 'Your verification code is: 1, 2, 3, 4, 5, 6'],
    ['sms', 'Your verification code is: 123456'],
  ])
})

test('the voice code is verified as plain digits', async () => {
  const h = await start({ credits: 1 })
  const r = await h.send({ channel: 'voice', recipient: PHONE, message: 'Code {code}' })
  const spoken = h.delivery.sent[0]!.text.slice('Code '.length)
  expect(spoken).toMatch(/^\d(, \d){5}$/)
  const ok = await h.verify({ verification_id: r.json.verification_id, code: spoken.replaceAll(', ', '') })
  expect(ok.json.message).toBe('Code verified successfully')
})

test('a generated code has 6 digits by default and verifies', async () => {
  const h = await start({ credits: 1 })
  const r = await h.send({ channel: 'sms', recipient: PHONE, message: '[{code}]' })
  expect(h.delivery.sent[0]!.text).toMatch(/^\[\d{6}\]$/)
  const ok = await h.verify({ verification_id: r.json.verification_id, code: h.delivery.lastCode() })
  expect(ok.json.verified).toBe(true)
})

test("a generated code follows the account's code length", async () => {
  const h = await start({ credits: 2 })
  await h.server.admin.setCodeLength('default', 8)
  await h.send({ channel: 'sms', recipient: PHONE, message: '[{code}]' })
  await h.server.admin.setCodeLength('default', 4)
  await h.send({ channel: 'sms', recipient: PHONE, message: '[{code}]' })
  expect(h.delivery.sent[0]!.text).toMatch(/^\[\d{8}\]$/)
  expect(h.delivery.sent[1]!.text).toMatch(/^\[\d{4}\]$/)
})

test('config codes.default_length applies to accounts without a setting; the account setting wins', async () => {
  const h = await start({ credits: 2, config: { codes: { default_length: 10 } } })
  await h.send({ channel: 'sms', recipient: PHONE, message: '[{code}]' })
  await h.server.admin.setCodeLength('default', 5)
  await h.send({ channel: 'sms', recipient: PHONE, message: '[{code}]' })
  expect(h.delivery.sent[0]!.text).toMatch(/^\[\d{10}\]$/)
  expect(h.delivery.sent[1]!.text).toMatch(/^\[\d{5}\]$/)
})

test('each send creates a new verification; the older one stays valid', async () => {
  const h = await start({ credits: 2 })
  const first = await h.send({ channel: 'sms', recipient: PHONE, code: '1111' })
  const second = await h.send({ channel: 'sms', recipient: PHONE, code: '2222' })
  expect(first.json.verification_id).not.toBe(second.json.verification_id)
  expect(h.delivery.sent.map((m) => m.text)).toEqual(['Your verification code is: 1111', 'Your verification code is: 2222'])
  // Each code belongs to its own verification only.
  expect((await h.verify({ verification_id: first.json.verification_id, code: '2222' })).json.message).toBe('Invalid code')
  expect((await h.verify({ verification_id: first.json.verification_id, code: '1111' })).json.message).toBe('Code verified successfully')
  expect((await h.verify({ verification_id: second.json.verification_id, code: '2222' })).json.message).toBe('Code verified successfully')
})

test('each channel costs exactly 1 credit', async () => {
  const h = await start({ credits: 3 })
  const balances: number[] = []
  for (const body of [
    { channel: 'sms', recipient: PHONE },
    { channel: 'email', recipient: 'ada@example.com' },
    { channel: 'voice', recipient: '+14155550124' },
  ]) {
    expect((await h.send(body)).status).toBe(200)
    balances.push((await h.server.admin.balance()).balance)
  }
  expect(balances).toEqual([2, 1, 0])
  const kinds = (await h.server.admin.history()).entries.map((e) => [e.kind, e.amount])
  expect(kinds).toEqual([
    ['debit', 1],
    ['debit', 1],
    ['debit', 1],
    ['grant', 3],
  ])
})

test('balance 0: 402 with the exact message, nothing consumed or delivered', async () => {
  const h = await start({ credits: 1 })
  expect((await h.send({ channel: 'sms', recipient: PHONE })).status).toBe(200)
  const r = await h.send({ channel: 'email', recipient: 'ada@example.com' })
  expect(r.status).toBe(402)
  expect(r.json).toEqual({ error: NO_CREDITS, request_id: r.headers.get('x-request-id')! })
  expect(r.headers.get('retry-after')).toBeNull()
  expect((await h.server.admin.balance()).balance).toBe(0)
  expect(h.delivery.sent).toHaveLength(1)
  expect((await h.server.admin.history()).entries.map((e) => e.kind)).toEqual(['debit', 'grant'])
})

test('a fresh account with no credits gets 402 on every channel', async () => {
  const h = await start()
  for (const body of [
    { channel: 'sms', recipient: PHONE },
    { channel: 'voice', recipient: PHONE },
    { channel: 'email', recipient: 'ada@example.com' },
  ]) {
    const r = await h.send(body)
    expect([r.status, r.json.error]).toEqual([402, NO_CREDITS])
  }
  expect((await h.server.admin.balance()).balance).toBe(0)
})

test('a 402 does not count toward the per-recipient limit', async () => {
  const h = await start()
  for (let i = 0; i < 3; i++) expect((await h.send({ channel: 'sms', recipient: PHONE })).status).toBe(402)
  await h.server.admin.addCredits(5)
  expect((await h.send({ channel: 'sms', recipient: PHONE })).status).toBe(200)
  expect((await h.send({ channel: 'sms', recipient: PHONE })).status).toBe(200)
  expect((await h.send({ channel: 'sms', recipient: PHONE })).status).toBe(429)
})

test('delivery failure: 500 with the generic message, credit refunded, verification unusable', async () => {
  const h = await start({ credits: 1 })
  h.delivery.fail = true
  const r = await h.send({ channel: 'sms', recipient: PHONE, code: '9876' })
  expect(r.status).toBe(500)
  expect(r.json).toEqual({ error: 'Failed to send verification', request_id: r.headers.get('x-request-id')! })
  expect(h.delivery.sent).toHaveLength(0)
  expect((await h.server.admin.balance()).balance).toBe(1)

  const [refund, debit, grant] = (await h.server.admin.history()).entries
  expect([refund!.kind, refund!.amount, debit!.kind, debit!.amount, grant!.kind]).toEqual(['refund', 1, 'debit', 1, 'grant'])
  expect(refund!.verificationId).toMatch(UUID_V4)
  expect(debit!.verificationId).toBe(refund!.verificationId)
  // The verification the failed send created answers 404, even with its code.
  const v = await h.verify({ verification_id: refund!.verificationId!, code: '9876' })
  expect([v.status, v.json.error]).toEqual([404, 'Verification not found'])
  // The cause is logged with the request id; the code never is.
  const logged = h.logs.filter((l) => l.includes(r.json.request_id))
  expect(logged.some((l) => l.includes('provider unavailable (test)'))).toBe(true)
  expect(h.logs.some((l) => l.includes('9876'))).toBe(false)
})

test('a failed send does not count toward the per-recipient limit', async () => {
  const h = await start({ credits: 2 })
  h.delivery.fail = true
  for (let i = 0; i < 3; i++) expect((await h.send({ channel: 'sms', recipient: PHONE })).status).toBe(500)
  h.delivery.fail = false
  expect((await h.send({ channel: 'sms', recipient: PHONE })).status).toBe(200)
  expect((await h.send({ channel: 'sms', recipient: PHONE })).status).toBe(200)
  expect((await h.server.admin.balance()).balance).toBe(0)
  expect((await h.send({ channel: 'sms', recipient: PHONE })).status).toBe(429)
})

test('order of checks: a test recipient needs no credit even when the real limit would apply', async () => {
  const h = await start()
  for (let i = 0; i < 3; i++) expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).status).toBe(200)
  expect((await h.server.admin.balance()).balance).toBe(0)
})

test('order of checks: the per-recipient limit (429) comes before credits (402)', async () => {
  const h = await start({ credits: 2 })
  await h.send({ channel: 'sms', recipient: PHONE })
  await h.send({ channel: 'sms', recipient: PHONE })
  expect((await h.server.admin.balance()).balance).toBe(0)
  const limited = await h.send({ channel: 'sms', recipient: PHONE })
  expect(limited.status).toBe(429)
  expect(limited.json.error).toStartWith('Rate limit exceeded: Maximum 2 verification codes per minute.')
  const broke = await h.send({ channel: 'sms', recipient: '+14155550124' })
  expect([broke.status, broke.json.error]).toEqual([402, NO_CREDITS])
})

test('order of checks: validation (400) comes before credits (402)', async () => {
  const h = await start()
  const r = await h.send({ channel: 'sms', recipient: 'nope' })
  expect([r.status, r.json.error]).toEqual([400, 'recipient must be a valid E.164 phone number for SMS and voice channels'])
})
