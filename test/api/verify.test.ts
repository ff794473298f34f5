/**
 * Verify (docs/api.md#verify-a-code, docs/api.md#verification-states,
 * docs/api.md#order-of-checks, docs/api.md#lockout, docs/api.md#errors):
 * validation, look-up, the state machine, the order of its checks, the
 * per-verification lockout and the per-recipient failure cap.
 */
import { describe, expect, test } from 'bun:test'
import { expectError, harnessPerTest, HOUR, TEST, type Harness, type Result } from '../kit/harness.ts'

const LOCKED = 'Too many failed attempts. Please try again in 15 minutes or request a new code.'
const CODE_FORMAT = 'code must be a numeric string between 4-10 digits'
const WRONG = '000000'

let h: Harness
const start = harnessPerTest()

/** A verification of the SUCCESS test recipient (code 123456). */
async function sendTest(expiresIn = 300, recipient: string = TEST.PHONE_SUCCESS): Promise<string> {
  const r = await h.send({ channel: 'sms', recipient, expires_in: expiresIn })
  expect(r.status).toBe(200)
  return r.json.verification_id
}

/** A verification of a real recipient; returns its id and the delivered code. */
async function sendReal(recipient: string): Promise<{ id: string; code: string }> {
  const r = await h.send({ channel: 'sms', recipient, expires_in: 3600 })
  expect(r.status).toBe(200)
  return { id: r.json.verification_id, code: h.delivery.lastCode() }
}

const verify = (id: string, code: string) => h.verify({ verification_id: id, code })

function expectResult(r: Result, verified: boolean, message: string) {
  expect(r.status).toBe(200)
  expect(r.json).toEqual({ success: true, verified, message, request_id: r.headers.get('x-request-id') })
}

function expectLocked(r: Result, retryAfter: number, message = LOCKED) {
  expect(r.status).toBe(429)
  expect(r.json).toEqual({ success: true, verified: false, message, request_id: r.headers.get('x-request-id'), retry_after: retryAfter })
  expect(r.headers.get('retry-after')).toBe(String(retryAfter))
}

/** Send while the recipient's failure cap holds (docs/api.md#hardening). */
function expectCappedSend(r: Result, retryAfter: number) {
  expect(r.status).toBe(429)
  expect(r.json).toEqual({
    error: `Rate limit exceeded: too many failed attempts for this recipient. Please try again in ${retryAfter} seconds.`,
    request_id: r.headers.get('x-request-id'),
    retry_after: retryAfter,
  })
  expect(r.headers.get('retry-after')).toBe(String(retryAfter))
}

async function failTimes(id: string, n: number) {
  for (let i = 0; i < n; i++) expectResult(await verify(id, WRONG), false, 'Invalid code')
}

describe('validation', () => {
  const id = '3f1c5a52-8a3e-4e0f-9a51-0b8f4f5f6d10'
  const rows: [string, Record<string, unknown>, string][] = [
    ['verification_id missing', { code: '123456' }, 'verification_id is required'],
    ['verification_id a number', { verification_id: 42, code: '123456' }, 'verification_id is required'],
    ['verification_id null', { verification_id: null, code: '123456' }, 'verification_id is required'],
    ['verification_id an array', { verification_id: [id], code: '123456' }, 'verification_id is required'],
    ['code missing', { verification_id: id }, 'code is required'],
    ['code with a letter', { verification_id: id, code: '12a4' }, CODE_FORMAT],
    ['code of 3 digits', { verification_id: id, code: '123' }, CODE_FORMAT],
    ['code of 11 digits', { verification_id: id, code: '12345678901' }, CODE_FORMAT],
    ['code a number', { verification_id: id, code: 123456 }, CODE_FORMAT],
    ['code an empty string', { verification_id: id, code: '' }, CODE_FORMAT],
    ['code with spaces', { verification_id: id, code: ' 123456' }, CODE_FORMAT],
    ['both missing: verification_id first', {}, 'verification_id is required'],
    ['both wrong: verification_id first', { verification_id: 1, code: 'x' }, 'verification_id is required'],
  ]
  for (const [name, body, error] of rows) {
    test(`${name} -> 400 ${error}`, async () => {
      h = await start()
      expectError(await h.verify(body), 400, error)
    })
  }

  test('codes of 4 and 10 digits pass validation (and are compared)', async () => {
    h = await start()
    const v = await sendTest()
    expectResult(await verify(v, '1234'), false, 'Invalid code')
    expectResult(await verify(v, '1234567890'), false, 'Invalid code')
  })
})

describe('look-up', () => {
  const ids: [string, (real: string) => string][] = [
    ['an unknown UUID', () => crypto.randomUUID()],
    ['a malformed id', () => 'not-a-uuid'],
    ['an empty id', () => ''],
    ['the real id upper-cased', (real) => real.toUpperCase()],
    ['the real id with a trailing space', (real) => `${real} `],
  ]
  for (const [name, make] of ids) {
    test(`${name} -> 404 Verification not found`, async () => {
      h = await start()
      const real = await sendTest()
      expectError(await verify(make(real), '123456'), 404, 'Verification not found')
    })
  }
})

describe('state machine', () => {
  test('correct code -> verified; afterwards any code -> Code already used', async () => {
    h = await start()
    const v = await sendTest()
    expectResult(await verify(v, '123456'), true, 'Code verified successfully')
    expectResult(await verify(v, '123456'), false, 'Code already used')
    expectResult(await verify(v, WRONG), false, 'Code already used')
  })

  test('wrong code -> 200 Invalid code, and the verification stays valid', async () => {
    h = await start()
    const v = await sendTest()
    expectResult(await verify(v, WRONG), false, 'Invalid code')
    expectResult(await verify(v, '12345'), false, 'Invalid code')
    expectResult(await verify(v, '123456'), true, 'Code verified successfully')
  })

  test('a real code verifies; a near miss does not', async () => {
    h = await start({ credits: 1 })
    const { id, code } = await sendReal('+14155550101')
    const nearMiss = code.slice(0, -1) + String((Number(code.at(-1)) + 1) % 10)
    expectResult(await verify(id, nearMiss), false, 'Invalid code')
    expectResult(await verify(id, code), true, 'Code verified successfully')
  })

  test('valid until 1 ms before expires_at; expired at exactly expires_at', async () => {
    h = await start()
    const sentAt = h.clock.now()
    const r = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS, expires_in: 60 })
    expect(r.json.expires_at).toBe(new Date(sentAt + 60_000).toISOString())
    const other = await sendTest(60)
    h.clock.advance(59_999)
    expectResult(await verify(r.json.verification_id, '123456'), true, 'Code verified successfully')
    h.clock.advance(1)
    expectResult(await verify(other, '123456'), false, 'Code expired')
    expectResult(await verify(other, WRONG), false, 'Code expired')
  })
})

describe('order of checks', () => {
  test('used beats expired', async () => {
    h = await start()
    const v = await sendTest(60)
    expectResult(await verify(v, '123456'), true, 'Code verified successfully')
    h.clock.advance(61_000)
    expectResult(await verify(v, '123456'), false, 'Code already used')
  })

  test('expired beats locked', async () => {
    h = await start()
    const v = await sendTest(60)
    await failTimes(v, 5)
    expectLocked(await verify(v, '123456'), 900)
    h.clock.advance(60_000)
    expectResult(await verify(v, '123456'), false, 'Code expired')
  })

  test('locked beats compare: the correct code is refused while locked', async () => {
    h = await start()
    const v = await sendTest()
    await failTimes(v, 5)
    expectLocked(await verify(v, '123456'), 900)
    expectLocked(await verify(v, WRONG), 900)
  })

  test('attempts on used or expired verifications are not failures', async () => {
    // A per-recipient cap of 3 would trip if any of these 10 attempts counted.
    h = await start({ config: { limits: { recipient_failures_per_day: 3 } } })
    const used = await sendTest(60)
    expectResult(await verify(used, '123456'), true, 'Code verified successfully')
    for (let i = 0; i < 5; i++) expectResult(await verify(used, WRONG), false, 'Code already used')
    const expired = await sendTest(60)
    h.clock.advance(60_000)
    for (let i = 0; i < 5; i++) expectResult(await verify(expired, WRONG), false, 'Code expired')
    const fresh = await sendTest()
    await failTimes(fresh, 2)
    expectResult(await verify(fresh, '123456'), true, 'Code verified successfully')
  })
})

describe('lockout', () => {
  test('the 5th wrong code still answers Invalid code; then every verify answers the 429 body', async () => {
    h = await start()
    const v = await sendTest()
    await failTimes(v, 4)
    expectResult(await verify(v, WRONG), false, 'Invalid code')
    expectLocked(await verify(v, WRONG), 900)
    expectLocked(await verify(v, '123456'), 900)
  })

  test('retry_after counts down in whole seconds, rounded up; at 900 s a correct code verifies', async () => {
    h = await start()
    const v = await sendTest(3600)
    await failTimes(v, 5)
    const lockedAt = h.clock.now()
    const at = async (ms: number, retryAfter: number) => {
      h.clock.set(lockedAt + ms)
      expectLocked(await verify(v, '123456'), retryAfter)
    }
    await at(0, 900)
    await at(1, 900)
    await at(999, 900)
    await at(1000, 899)
    await at(1001, 899)
    await at(899_000, 1)
    await at(899_500, 1)
    await at(899_999, 1)
    h.clock.set(lockedAt + 900_000)
    expectResult(await verify(v, '123456'), true, 'Code verified successfully')
  })

  test('when the lock ends the counter is 0: five more failures are needed to lock again', async () => {
    h = await start()
    const v = await sendTest(3600)
    await failTimes(v, 5)
    h.clock.advance(900_000)
    await failTimes(v, 5)
    expectLocked(await verify(v, '123456'), 900)
  })

  test('four failures do not lock: the correct code still verifies', async () => {
    h = await start()
    const v = await sendTest()
    await failTimes(v, 4)
    expectResult(await verify(v, '123456'), true, 'Code verified successfully')
  })

  test('a new send to the same recipient is not affected by the old lock, which stays', async () => {
    h = await start({ credits: 2 })
    const old = await sendReal('+14155550102')
    await failTimes(old.id, 5)
    expectLocked(await verify(old.id, old.code), 900)
    const fresh = await sendReal('+14155550102')
    expect(fresh.id).not.toBe(old.id)
    expectResult(await verify(fresh.id, fresh.code), true, 'Code verified successfully')
    expectLocked(await verify(old.id, old.code), 900)
  })

  test('limits.max_failed_attempts and limits.lockout_seconds are honoured', async () => {
    h = await start({ config: { limits: { max_failed_attempts: 3, lockout_seconds: 120 } } })
    const v = await sendTest(3600)
    await failTimes(v, 3)
    const message = 'Too many failed attempts. Please try again in 2 minutes or request a new code.'
    expectLocked(await verify(v, '123456'), 120, message)
    h.clock.advance(119_001)
    expectLocked(await verify(v, '123456'), 1, message)
    h.clock.advance(999)
    expectResult(await verify(v, '123456'), true, 'Code verified successfully')
  })
})

describe('per-recipient failure cap', () => {
  test('failures across verifications of one recipient lock all of its verifications', async () => {
    h = await start({ credits: 10, config: { limits: { recipient_failures_per_day: 7, max_failed_attempts: 100 } } })
    const alice = '+14155550103'
    const t0 = h.clock.now()
    const first = await sendReal(alice)
    await failTimes(first.id, 3)
    h.clock.advance(10 * 60_000)
    const second = await sendReal(alice)
    await failTimes(second.id, 4) // the 7th failure still answers Invalid code

    h.clock.advance(10 * 60_000)
    const wait = (t0 + 24 * HOUR - h.clock.now()) / 1000
    expect(wait).toBe(85_200)
    expectLocked(await verify(first.id, first.code), wait)
    expectLocked(await verify(second.id, second.code), wait)
    // No new code while the cap holds: send refuses with the same wait.
    expectCappedSend(await h.send({ channel: 'sms', recipient: alice }), wait)

    // Other recipients of the account are not affected.
    const bob = await sendReal('+14155550104')
    expectResult(await verify(bob.id, WRONG), false, 'Invalid code')
    expectResult(await verify(bob.id, bob.code), true, 'Code verified successfully')

    // Room returns exactly when the oldest failures leave the 24 h window.
    h.clock.set(t0 + 24 * HOUR - 1)
    expectCappedSend(await h.send({ channel: 'sms', recipient: alice }), 1)
    h.clock.set(t0 + 24 * HOUR)
    const fourth = await sendReal(alice)
    expectResult(await verify(fourth.id, fourth.code), true, 'Code verified successfully')
  })

  test('the cap is per account: the same number under another account is not locked', async () => {
    h = await start({ credits: 10, config: { limits: { recipient_failures_per_day: 3, max_failed_attempts: 100 } } })
    const shared = '+14155550105'
    const mine = await sendReal(shared)
    await failTimes(mine.id, 3)
    expect((await verify(mine.id, mine.code)).status).toBe(429)

    await h.server.admin.createAccount('acme')
    await h.server.admin.addCredits(1, 'acme')
    const acmeKey = (await h.server.admin.createKey({ account: 'acme' })).key
    const theirs = await h.send({ channel: 'sms', recipient: shared }, acmeKey)
    const code = h.delivery.lastCode()
    const r = await h.verify({ verification_id: theirs.json.verification_id, code }, acmeKey)
    expectResult(r, true, 'Code verified successfully')
  })
})
