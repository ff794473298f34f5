/**
 * Test recipients (docs/api.md#test-recipients): the five reserved
 * recipients, on every channel they work with, with a balance of 0; the
 * recipient failure cap spares them, their own lockout does not.
 */
import { describe, expect, test } from 'bun:test'
import { harnessPerTest, TEST, type Harness, type Result } from '../kit/harness.ts'

const start = harnessPerTest()

type Mode = 'success' | 'fail' | 'expired'
interface Row {
  name: string
  channel: 'sms' | 'voice' | 'email' | 'whatsapp'
  recipient: string
  mode: Mode
}
const rows: Row[] = [
  { name: 'TEST_PHONE_SUCCESS', channel: 'sms', recipient: TEST.PHONE_SUCCESS, mode: 'success' },
  { name: 'TEST_PHONE_SUCCESS', channel: 'voice', recipient: TEST.PHONE_SUCCESS, mode: 'success' },
  { name: 'TEST_PHONE_FAIL', channel: 'sms', recipient: TEST.PHONE_FAIL, mode: 'fail' },
  { name: 'TEST_PHONE_FAIL', channel: 'voice', recipient: TEST.PHONE_FAIL, mode: 'fail' },
  { name: 'TEST_PHONE_EXPIRED', channel: 'sms', recipient: TEST.PHONE_EXPIRED, mode: 'expired' },
  { name: 'TEST_PHONE_EXPIRED', channel: 'voice', recipient: TEST.PHONE_EXPIRED, mode: 'expired' },
  // WhatsApp's test numbers are the SMS ones (docs/api.md#test-recipients).
  { name: 'TEST_PHONE_SUCCESS', channel: 'whatsapp', recipient: TEST.PHONE_SUCCESS, mode: 'success' },
  { name: 'TEST_PHONE_FAIL', channel: 'whatsapp', recipient: TEST.PHONE_FAIL, mode: 'fail' },
  { name: 'TEST_PHONE_EXPIRED', channel: 'whatsapp', recipient: TEST.PHONE_EXPIRED, mode: 'expired' },
  { name: 'TEST_EMAIL_SUCCESS', channel: 'email', recipient: TEST.EMAIL_SUCCESS, mode: 'success' },
  { name: 'TEST_EMAIL_FAIL', channel: 'email', recipient: TEST.EMAIL_FAIL, mode: 'fail' },
]
// The literal values are part of the contract (docs/api.md#test-recipients).
test('the five test recipients have the documented values', () => {
  expect(TEST).toEqual({
    PHONE_SUCCESS: '+15550100001',
    PHONE_FAIL: '+15550100002',
    PHONE_EXPIRED: '+15550100003',
    EMAIL_SUCCESS: 'success@otpd.test',
    EMAIL_FAIL: 'fail@otpd.test',
  })
})

const FIRST_ANSWER: Record<Mode, string> = { success: 'Code verified successfully', fail: 'Invalid code', expired: 'Code expired' }
const LOCKOUT = 'Too many failed attempts. Please try again in 15 minutes or request a new code.'

function expectLockout(r: Result, seconds: number) {
  expect(r.status).toBe(429)
  expect(r.json).toEqual({ success: true, verified: false, message: LOCKOUT, request_id: r.headers.get('x-request-id')!, retry_after: seconds })
  expect(r.headers.get('retry-after')).toBe(String(seconds))
}

for (const row of rows) {
  const label = `${row.name} over ${row.channel}`

  test(`${label}: 200 with a balance of 0, nothing delivered, no credit used, answers the fixed code as documented`, async () => {
    const h = await start()
    const sentAt = h.clock.now()
    const r = await h.send({ channel: row.channel, recipient: row.recipient })
    expect(r.status).toBe(200)
    expect(r.json.success).toBe(true)
    const expiresAt = row.mode === 'expired' ? sentAt : sentAt + 300_000
    expect(r.json.expires_at).toBe(new Date(expiresAt).toISOString())
    expect(h.delivery.sent).toHaveLength(0)
    expect((await h.server.admin.balance()).balance).toBe(0)
    expect((await h.server.admin.history()).entries).toHaveLength(0)

    const v = await h.verify({ verification_id: r.json.verification_id, code: '123456' })
    expect(v.status).toBe(200)
    expect(v.json).toMatchObject({ success: true, verified: row.mode === 'success', message: FIRST_ANSWER[row.mode] })
    const again = await h.verify({ verification_id: r.json.verification_id, code: '123456' })
    const second = row.mode === 'success' ? 'Code already used' : FIRST_ANSWER[row.mode]
    expect(again.json).toMatchObject({ verified: false, message: second })
  })

  test(`${label}: exempt from the per-recipient limits (10 sends in a minute)`, async () => {
    const h = await start()
    const statuses: number[] = []
    for (let i = 0; i < 10; i++) {
      statuses.push((await h.send({ channel: row.channel, recipient: row.recipient })).status)
      h.clock.advance(1000)
    }
    expect(statuses).toEqual(Array(10).fill(200))
  })
}

for (const row of rows.filter((r) => r.mode === 'success')) {
  const label = `${row.name} over ${row.channel}`

  test(`${label}: a custom code is ignored; 123456 still works`, async () => {
    const h = await start()
    const r = await h.send({ channel: row.channel, recipient: row.recipient, code: '654321' })
    expect(r.status).toBe(200)
    const id = r.json.verification_id
    expect((await h.verify({ verification_id: id, code: '654321' })).json.message).toBe('Invalid code')
    expect((await h.verify({ verification_id: id, code: '123456' })).json.message).toBe('Code verified successfully')
  })

  test(`${label}: wrong codes count as failures; the 6th attempt is locked out for 15 minutes`, async () => {
    const h = await start()
    const r = await h.send({ channel: row.channel, recipient: row.recipient, expires_in: 3600 })
    const id = r.json.verification_id
    for (let i = 0; i < 5; i++) {
      const v = await h.verify({ verification_id: id, code: '000000' })
      expect([v.status, v.json.verified, v.json.message]).toEqual([200, false, 'Invalid code'])
    }
    expectLockout(await h.verify({ verification_id: id, code: '123456' }), 900)
    h.clock.advance(899_000)
    expectLockout(await h.verify({ verification_id: id, code: '123456' }), 1)
    h.clock.advance(1000)
    expect((await h.verify({ verification_id: id, code: '123456' })).json.message).toBe('Code verified successfully')
  })
}

for (const row of rows.filter((r) => r.mode === 'fail')) {
  test(`${row.name} over ${row.channel}: 123456 answers Invalid code and locks after 5`, async () => {
    const h = await start()
    const r = await h.send({ channel: row.channel, recipient: row.recipient, code: '987654' })
    const id = r.json.verification_id
    for (const code of ['123456', '987654', '123456', '000000', '123456']) {
      const v = await h.verify({ verification_id: id, code })
      expect([v.status, v.json.verified, v.json.message]).toEqual([200, false, 'Invalid code'])
    }
    expectLockout(await h.verify({ verification_id: id, code: '123456' }), 900)
  })
}

for (const row of rows.filter((r) => r.mode === 'expired')) {
  test(`${row.name} over ${row.channel}: Code expired even for 123456, with any expires_in; never locks`, async () => {
    const h = await start()
    const r = await h.send({ channel: row.channel, recipient: row.recipient, expires_in: 3600 })
    expect(r.json.expires_at).toBe(new Date(h.clock.now()).toISOString())
    // Attempts on an expired verification are not failures (docs/api.md#verification-states).
    for (const code of ['123456', '000000', '000000', '000000', '000000', '000000', '123456']) {
      const v = await h.verify({ verification_id: r.json.verification_id, code })
      expect([v.status, v.json.verified, v.json.message]).toEqual([200, false, 'Code expired'])
    }
  })
}

test('test recipients count toward the per-key limit', async () => {
  const h = await start({ config: { limits: { key_requests_per_minute: 3 } } })
  const bodies = [
    { channel: 'sms', recipient: TEST.PHONE_SUCCESS },
    { channel: 'voice', recipient: TEST.PHONE_FAIL },
    { channel: 'email', recipient: TEST.EMAIL_SUCCESS },
  ]
  for (const body of bodies) expect((await h.send(body)).status).toBe(200)
  h.clock.advance(1000)
  const r = await h.send({ channel: 'sms', recipient: TEST.PHONE_EXPIRED })
  expect(r.status).toBe(429)
  expect(r.json).toEqual({
    error: 'Rate limit exceeded: Maximum 3 requests per minute. Please try again in 59 seconds.',
    request_id: r.headers.get('x-request-id')!,
    retry_after: 59,
  })
  expect(r.headers.get('retry-after')).toBe('59')
})

test('test recipients work with a key of any account, without credits', async () => {
  const h = await start()
  await h.server.admin.createAccount('acme')
  const acme = (await h.server.admin.createKey({ name: 'acme', account: 'acme' })).key
  const r = await h.send({ channel: 'email', recipient: TEST.EMAIL_SUCCESS }, acme)
  expect(r.status).toBe(200)
  expect((await h.verify({ verification_id: r.json.verification_id, code: '123456' }, acme)).json.verified).toBe(true)
  expect((await h.server.admin.balance('acme')).balance).toBe(0)
})

test('a test send does not use up the limit of real recipients', async () => {
  const h = await start({ credits: 2 })
  for (let i = 0; i < 5; i++) await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  expect((await h.send({ channel: 'sms', recipient: '+15550100004' })).status).toBe(200)
  expect((await h.send({ channel: 'sms', recipient: '+15550100004' })).status).toBe(200)
  expect(h.delivery.sent.map((m) => m.recipient)).toEqual(['+15550100004', '+15550100004'])
})

describe("the recipient failure cap does not apply to test recipients: the verification's own lockout does", () => {
  const statusOf = (h: Harness, id: string) => h.call(`/api/v1/verifications/${id}`, undefined, { method: 'GET', headers: {} })
  for (const [name, recipient] of [
    ['the SUCCESS test phone', TEST.PHONE_SUCCESS],
    ['the FAIL test phone', TEST.PHONE_FAIL],
  ] as const) {
    test(`${name}: failures past the cap lock neither the status nor verify; its own 15-minute lockout still applies`, async () => {
      const h = await start({ config: { limits: { recipient_failures_per_day: 3, max_failed_attempts: 5 } } })
      const a = (await h.send({ channel: 'sms', recipient })).json.verification_id as string
      for (let i = 0; i < 4; i++) expect((await h.verify({ verification_id: a, code: '000000' })).json.message).toBe('Invalid code')
      expect((await statusOf(h, a)).json).toMatchObject({ status: 'pending', failed_attempts: 4 })
      const b = (await h.send({ channel: 'sms', recipient })).json.verification_id as string
      expect((await statusOf(h, b)).json).toMatchObject({ status: 'pending', failed_attempts: 0 })
      const r = await h.verify({ verification_id: b, code: '123456' })
      expect(r.status).toBe(200)
      expect(r.json.message).toBe(recipient === TEST.PHONE_SUCCESS ? 'Code verified successfully' : 'Invalid code')
      // The fifth failure of one verification is its own lockout, as for any recipient.
      await h.verify({ verification_id: a, code: '000000' })
      expect((await statusOf(h, a)).json).toMatchObject({ status: 'locked', failed_attempts: 5 })
      expect((await h.verify({ verification_id: a, code: '123456' })).status).toBe(429)
    })
  }
})
