/**
 * Idempotency keys (docs/api.md#idempotency-keys) on send, verify and cancel:
 * the header's rules (and GET status, which ignores it), the scope, what is
 * stored (and what is not), verbatim replays that run nothing again and write
 * no event, 422 for another body, 409 while the first request runs,
 * retention, and a send left running by a stopped process.
 * Concurrency, restarts and processes: idempotency-concurrency.test.ts.
 */
import { describe, expect, test } from 'bun:test'
import { RECOVERY_MARGIN_MS } from '../../src/otp/recovery.ts'
import { eventTypes } from '../kit/events.ts'
import { harnessPerTest, RecordingDelivery, StuckDelivery, TEST, type Harness } from '../kit/harness.ts'
import { sameDatabase } from '../kit/same-database.ts'

const start = harnessPerTest()

const PHONE = '+14155550123'
const SEND = '/api/v1/send'
const VERIFY = '/api/v1/verify'
const cancelPath = (id: string) => `/api/v1/verifications/${id}/cancel`
const statusOf = (h: Harness, id: string, headers: Record<string, string> = {}) => h.call(`/api/v1/verifications/${id}`, undefined, { method: 'GET', headers })
/** Options of `h.call` that send this Idempotency-Key. */
const withKey = (key: string) => ({ headers: { 'idempotency-key': key } })

interface Raw {
  status: number
  headers: Headers
  text: string
  json: Record<string, any>
}

/** A POST with an Idempotency-Key (`null`: none), the body as given (a string is sent as is). */
async function post(h: Harness, path: string, body: unknown, key: string | null, opts: { apiKey?: string; contentType?: string | null } = {}): Promise<Raw> {
  const headers: Record<string, string> = { authorization: `Bearer ${opts.apiKey ?? h.key}` }
  if (opts.contentType !== null) headers['content-type'] = opts.contentType ?? 'application/json'
  if (key !== null) headers['idempotency-key'] = key
  const res = await h.server.http.handle(
    new Request(`http://localhost${path}`, {
      method: 'POST',
      headers,
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    }),
  )
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, json: JSON.parse(text) }
}

function expectError(r: Pick<Raw, 'status' | 'headers' | 'json'>, code: number, error: string) {
  expect(r.status).toBe(code)
  expect(r.json).toEqual({ error, request_id: r.headers.get('x-request-id')! })
  expect(r.headers.get('idempotent-replayed')).toBeNull()
}

/** `replay` is `first` verbatim, with the replay headers. */
function expectReplay(replay: Raw, first: Raw) {
  expect(replay.status).toBe(first.status)
  expect(replay.text).toBe(first.text)
  expect(replay.headers.get('idempotent-replayed')).toBe('true')
  expect(replay.headers.get('x-request-id')).toBe(first.json.request_id)
  expect(replay.headers.get('retry-after')).toBe(first.headers.get('retry-after'))
  expect(first.headers.get('idempotent-replayed')).toBeNull()
}

async function count(h: Harness, sql: string): Promise<number> {
  return Number((await h.sql(sql))[0]!.n)
}

describe('the header', () => {
  const bad: [string, string][] = [
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a space inside', 'two words'],
    ['a tab inside', 'a\tb'],
    ['a character outside ASCII', 'clé'],
  ]
  for (const [name, value] of bad) {
    test(`${name}: 400 with the exact text, on send, verify and cancel; not stored`, async () => {
      const h = await start()
      const msg = 'Idempotency-Key must be 1-255 visible ASCII characters'
      expectError(await post(h, SEND, { channel: 'sms', recipient: TEST.PHONE_SUCCESS }, value), 400, msg)
      expectError(await post(h, VERIFY, { verification_id: 'x', code: '123456' }, value), 400, msg)
      expectError(await post(h, cancelPath('x'), undefined, value, { contentType: null }), 400, msg)
      expect(await count(h, 'SELECT count(*) AS n FROM verifications')).toBe(0)
      expect(await count(h, 'SELECT count(*) AS n FROM idempotency_keys')).toBe(0)
    })
  }

  test('1 and 255 visible characters, every one from 0x21 to 0x7E, are keys', async () => {
    const h = await start()
    const all = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join('')
    for (const key of ['!', '~'.repeat(255), all]) {
      const r = await post(h, SEND, { channel: 'sms', recipient: TEST.PHONE_SUCCESS }, key)
      expect(r.status).toBe(200)
      expectReplay(await post(h, SEND, { channel: 'sms', recipient: TEST.PHONE_SUCCESS }, key), r)
    }
  })

  test('the header is checked after authentication and the per-key limit, before the body', async () => {
    const h = await start()
    expectError(await post(h, SEND, '{', '', { apiKey: 'otpd_' + 'z'.repeat(40) }), 401, 'Invalid API key')
    expectError(await post(h, SEND, '{', ''), 400, 'Idempotency-Key must be 1-255 visible ASCII characters')
    expectError(await post(h, SEND, '{', 'ok'), 400, 'Request body must be valid JSON')
  })

  test('a refused Idempotency-Key (400) still counts toward the per-key limit, like any authenticated request', async () => {
    const h = await start({ config: { limits: { key_requests_per_minute: 2 } } })
    expectError(
      await h.call(SEND, { channel: 'sms', recipient: TEST.PHONE_SUCCESS }, withKey('')),
      400,
      'Idempotency-Key must be 1-255 visible ASCII characters',
    )
    expectError(await h.call(cancelPath('x'), undefined, withKey('a b')), 400, 'Idempotency-Key must be 1-255 visible ASCII characters')
    const limited = await h.call(SEND, { channel: 'sms', recipient: TEST.PHONE_SUCCESS }, withKey('ok'))
    expect(limited.status).toBe(429)
    expect(limited.json.error).toBe('Rate limit exceeded: Maximum 2 requests per minute. Please try again in 60 seconds.')
    expect(limited.headers.get('retry-after')).toBe('60')
  })

  test('only the three POSTs read it: on GET status it is ignored whatever its value, each read answers afresh, never a replay, never a 400', async () => {
    const h = await start()
    const id = (await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).json.verification_id as string
    const ids = new Set<string>()
    for (const key of ['read-1', 'read-1', '', 'two words']) {
      const r = await statusOf(h, id, { 'idempotency-key': key })
      expect(r.status).toBe(200)
      expect(r.json).toMatchObject({ success: true, verification_id: id, status: 'pending' })
      expect(r.headers.get('idempotent-replayed')).toBeNull()
      expect(r.headers.get('x-request-id')).toBe(r.json.request_id)
      ids.add(r.json.request_id)
    }
    expect(ids.size).toBe(4)
    // A read after an approval shows the change: nothing was stored for it.
    await h.verify({ verification_id: id, code: '123456' })
    expect((await statusOf(h, id, { 'idempotency-key': 'read-1' })).json.status).toBe('approved')
  })
})

describe('send', () => {
  test('a replay answers the stored 200 verbatim, and nothing runs again: no delivery, no debit, no per-recipient count', async () => {
    const h = await start({ credits: 5 })
    const body = { channel: 'sms', recipient: PHONE, expires_in: 120 }
    const first = await post(h, SEND, body, 'order-1')
    expect(first.status).toBe(200)
    h.clock.advance(30_000)
    for (let i = 0; i < 3; i++) expectReplay(await post(h, SEND, body, 'order-1'), first)
    expect(h.delivery.sent).toHaveLength(1)
    expect((await h.server.admin.balance()).balance).toBe(4)
    expect(await count(h, 'SELECT count(*) AS n FROM verifications')).toBe(1)
    // The limit is 2 a minute: the replays took no room.
    expect((await post(h, SEND, body, null)).status).toBe(200)
    expect((await post(h, SEND, body, null)).status).toBe(429)
  })

  test('the same fields and values in another order and spacing are the same body', async () => {
    const h = await start({ credits: 2 })
    const first = await post(h, SEND, '{"channel":"sms","recipient":"+14155550123","expires_in":120,"message":"Code {code}"}', 'k')
    expect(first.status).toBe(200)
    const again = await post(h, SEND, '{\n  "message" : "Code {code}",\n  "expires_in": 120.0, "recipient":"\\u002b14155550123",  "channel": "sms"\n}', 'k')
    expectReplay(again, first)
    expect(h.delivery.sent).toHaveLength(1)
  })

  test('same key, another body: 422 with the exact text; nothing runs, and the stored answer stays', async () => {
    const h = await start({ credits: 2 })
    const first = await post(h, SEND, { channel: 'sms', recipient: PHONE }, 'k')
    for (const other of [
      { channel: 'sms', recipient: '+14155550124' },
      { channel: 'sms', recipient: PHONE, expires_in: 300 },
      { channel: 'sms', recipient: PHONE, extra: 1 },
    ]) {
      expectError(await post(h, SEND, other, 'k'), 422, 'Idempotency-Key was already used with a different request')
    }
    expect(h.delivery.sent).toHaveLength(1)
    expectReplay(await post(h, SEND, { channel: 'sms', recipient: PHONE }, 'k'), first)
  })

  test('the scope is the API key, the method and the path: the same key elsewhere is another key', async () => {
    const h = await start({ credits: 3 })
    const other = (await h.server.admin.createKey({ name: 'other' })).key
    const a = await post(h, SEND, { channel: 'sms', recipient: PHONE }, 'k')
    const b = await post(h, SEND, { channel: 'sms', recipient: '+14155550124' }, 'k', { apiKey: other })
    expect(a.status).toBe(200)
    expect(b.status).toBe(200)
    expect(b.json.verification_id).not.toBe(a.json.verification_id)
    // Same key on verify: its own scope, not a 422.
    const v = await post(h, VERIFY, { verification_id: a.json.verification_id, code: h.delivery.sent[0]!.text.slice(-6) }, 'k')
    expect(v.json).toMatchObject({ verified: true })
    const c = await post(h, cancelPath(b.json.verification_id), undefined, 'k', { apiKey: other, contentType: null })
    expect(c.status).toBe(200)
    expect(h.delivery.sent).toHaveLength(2)
  })

  test('stored: 402, even once credits are added', async () => {
    const h = await start()
    const first = await post(h, SEND, { channel: 'sms', recipient: PHONE }, 'k')
    expect(first.status).toBe(402)
    expect(first.json.error).toBe('Insufficient credits. Please purchase more credits.')
    await h.server.admin.addCredits(5)
    expectReplay(await post(h, SEND, { channel: 'sms', recipient: PHONE }, 'k'), first)
    expect(h.delivery.sent).toHaveLength(0)
    expect((await post(h, SEND, { channel: 'sms', recipient: PHONE }, 'k2')).status).toBe(200)
  })

  test('stored: a per-recipient 429, verbatim with its Retry-After, even once the window has room', async () => {
    const h = await start({ credits: 5, config: { limits: { recipient_per_minute: 1 } } })
    await post(h, SEND, { channel: 'sms', recipient: PHONE }, null)
    h.clock.advance(20_000)
    const first = await post(h, SEND, { channel: 'sms', recipient: PHONE }, 'k')
    expect(first.status).toBe(429)
    expect(first.json.retry_after).toBe(40)
    expect(first.headers.get('retry-after')).toBe('40')
    h.clock.advance(60_000)
    expectReplay(await post(h, SEND, { channel: 'sms', recipient: PHONE }, 'k'), first)
    expect(h.delivery.sent).toHaveLength(1)
  })

  test('stored: the 500 of a failed delivery; the replay tries no provider and refunds nothing more', async () => {
    const h = await start({ credits: 1 })
    h.delivery.fail = true
    const first = await post(h, SEND, { channel: 'sms', recipient: PHONE }, 'k')
    expect(first.status).toBe(500)
    expect(first.json.error).toBe('Failed to send verification')
    h.delivery.fail = false
    expectReplay(await post(h, SEND, { channel: 'sms', recipient: PHONE }, 'k'), first)
    expect(h.delivery.sent).toHaveLength(0)
    expect((await h.server.admin.balance()).balance).toBe(1)
  })

  test('stored: a test recipient send', async () => {
    const h = await start()
    const first = await post(h, SEND, { channel: 'sms', recipient: TEST.PHONE_SUCCESS }, 'k')
    expectReplay(await post(h, SEND, { channel: 'sms', recipient: TEST.PHONE_SUCCESS }, 'k'), first)
    expect(await count(h, 'SELECT count(*) AS n FROM verifications')).toBe(1)
  })

  test('not stored: 401, 403, 400 and 413; fixing the request and retrying with the same key runs it', async () => {
    const h = await start({ credits: 5 })
    const off = await h.server.admin.createKey({ name: 'off' })
    await h.server.admin.setKeyStatus(String(off.id), 'disabled')
    expectError(await post(h, SEND, { channel: 'sms', recipient: PHONE }, 'k', { apiKey: off.key }), 403, 'API key is disabled')
    await h.server.admin.setKeyStatus(String(off.id), 'active')
    const fixed = await post(h, SEND, { channel: 'sms', recipient: PHONE }, 'k', { apiKey: off.key })
    expect(fixed.status).toBe(200)

    expectError(await post(h, SEND, { channel: 'sms', recipient: '555' }, 'k'), 400, 'recipient must be a valid E.164 phone number for SMS and voice channels')
    expectError(await post(h, SEND, `{"channel":"sms","pad":"${'x'.repeat(17_000)}"}`, 'k'), 413, 'Request body too large')
    expectError(await post(h, SEND, { channel: 'sms', recipient: PHONE }, 'k', { contentType: 'text/plain' }), 400, 'Content-Type must be application/json')
    const res = await h.server.http.handle(new Request(`http://localhost${SEND}`, { method: 'POST', headers: { 'idempotency-key': 'k' }, body: '{}' }))
    expect(res.status).toBe(401)
    const ok = await post(h, SEND, { channel: 'sms', recipient: '+14155550124' }, 'k')
    expect(ok.status).toBe(200)
    expect(h.delivery.sent).toHaveLength(2)
  })

  test('not stored: the per-key 429; replays count toward the per-key limit, which comes first', async () => {
    const h = await start({ credits: 5, config: { limits: { key_requests_per_minute: 3 } } })
    const first = await post(h, SEND, { channel: 'sms', recipient: PHONE }, 'k')
    expectReplay(await post(h, SEND, { channel: 'sms', recipient: PHONE }, 'k'), first)
    expectReplay(await post(h, SEND, { channel: 'sms', recipient: PHONE }, 'k'), first)
    const limited = await post(h, SEND, { channel: 'sms', recipient: PHONE }, 'k')
    expectError(
      { ...limited, json: { error: limited.json.error, request_id: limited.json.request_id } },
      429,
      'Rate limit exceeded: Maximum 3 requests per minute. Please try again in 60 seconds.',
    )
    // A key limited on a new Idempotency-Key stores nothing: it runs once the window has room.
    expect((await post(h, SEND, { channel: 'sms', recipient: '+14155550124' }, 'k2')).status).toBe(429)
    h.clock.advance(60_000)
    expectReplay(await post(h, SEND, { channel: 'sms', recipient: PHONE }, 'k'), first)
    expect((await post(h, SEND, { channel: 'sms', recipient: '+14155550124' }, 'k2')).status).toBe(200)
    expect(h.delivery.sent).toHaveLength(2)
  })

  test('while the first request runs: 409 with the exact text (422 for another body); then the stored answer', async () => {
    let release!: () => void
    const delivery = new RecordingDelivery()
    delivery.gate = new Promise<void>((r) => (release = r))
    const hh = await start({ credits: 2, delivery })
    const body = { channel: 'sms', recipient: PHONE }
    const pending = post(hh, SEND, body, 'k')
    while ((await count(hh, "SELECT count(*) AS n FROM idempotency_keys WHERE state = 'running'")) === 0) await Bun.sleep(5)
    expectError(await post(hh, SEND, body, 'k'), 409, 'A request with this Idempotency-Key is still in progress')
    expectError(await post(hh, SEND, { ...body, expires_in: 60 }, 'k'), 422, 'Idempotency-Key was already used with a different request')
    delivery.gate = null
    release()
    const first = await pending
    expect(first.status).toBe(200)
    // The answer waited for the record: a replay right after it is the stored answer.
    expectReplay(await post(hh, SEND, body, 'k'), first)
    expect(delivery.sent).toHaveLength(1)
  })

  test('stored answers hold no secret: not the recipient, not the code, not the body', async () => {
    const h = await start({ credits: 1 })
    const first = await post(h, SEND, { channel: 'sms', recipient: PHONE, code: '98765432', message: 'Secret {code} here' }, 'k')
    expect(first.status).toBe(200)
    const rows = await h.sql('SELECT * FROM idempotency_keys')
    expect(rows).toHaveLength(1)
    const dump = JSON.stringify(rows, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v))
    for (const secret of [PHONE, '14155550123', '98765432', 'Secret']) expect(dump).not.toContain(secret)
    expect(rows[0]!.body).toBe(first.text)
    expect((rows[0]!.fingerprint as Uint8Array).byteLength).toBe(32)
  })
})

describe('verify', () => {
  test('a replay of the right code answers the stored success, not Code already used', async () => {
    const h = await start({ credits: 1 })
    const sent = await post(h, SEND, { channel: 'sms', recipient: PHONE }, null)
    const body = { verification_id: sent.json.verification_id, code: h.delivery.lastCode() }
    const first = await post(h, VERIFY, body, 'v1')
    expect(first.json).toMatchObject({ success: true, verified: true, message: 'Code verified successfully' })
    expectReplay(await post(h, VERIFY, body, 'v1'), first)
    expect((await post(h, VERIFY, body, null)).json.message).toBe('Code already used')
  })

  test('a replay of a wrong code is not a second attempt', async () => {
    const h = await start({ credits: 1 })
    const sent = await post(h, SEND, { channel: 'sms', recipient: PHONE }, null)
    const id = sent.json.verification_id
    const first = await post(h, VERIFY, { verification_id: id, code: '000000' }, 'v')
    expect(first.json.message).toBe('Invalid code')
    for (let i = 0; i < 10; i++) expectReplay(await post(h, VERIFY, { verification_id: id, code: '000000' }, 'v'), first)
    const s = await h.call(`/api/v1/verifications/${id}`, undefined, { method: 'GET' })
    expect(s.json).toMatchObject({ status: 'pending', failed_attempts: 1 })
    expect(await count(h, 'SELECT count(*) AS n FROM recipient_failures')).toBe(1)
  })

  test('stored: 404, and the lockout 429 verbatim (with its Retry-After) after the lock has ended', async () => {
    const h = await start({ credits: 1 })
    const nf = await post(h, VERIFY, { verification_id: '00000000-0000-4000-8000-000000000000', code: '123456' }, 'nf')
    expect(nf.status).toBe(404)
    expectReplay(await post(h, VERIFY, { verification_id: '00000000-0000-4000-8000-000000000000', code: '123456' }, 'nf'), nf)
    const sent = await post(h, SEND, { channel: 'sms', recipient: PHONE, expires_in: 3600 }, null)
    const id = sent.json.verification_id
    for (let i = 0; i < 5; i++) await post(h, VERIFY, { verification_id: id, code: '000000' }, null)
    const locked = await post(h, VERIFY, { verification_id: id, code: h.delivery.lastCode() }, 'lock')
    expect(locked.status).toBe(429)
    expect(locked.json).toMatchObject({ success: true, verified: false, retry_after: 900 })
    h.clock.advance(900_000)
    expectReplay(await post(h, VERIFY, { verification_id: id, code: h.delivery.lastCode() }, 'lock'), locked)
    expect((await post(h, VERIFY, { verification_id: id, code: h.delivery.lastCode() }, null)).json.verified).toBe(true)
  })

  test('a 400 is not stored; the fixed request with the same key runs; another body then is 422', async () => {
    const h = await start()
    const id = (await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).json.verification_id as string
    expectError(await h.call(VERIFY, { verification_id: id }, withKey('v')), 400, 'code is required')
    expectError(await h.call(VERIFY, { verification_id: id, code: '12' }, withKey('v')), 400, 'code must be a numeric string between 4-10 digits')
    expectError(await h.call(VERIFY, { code: '123456' }, withKey('v')), 400, 'verification_id is required')
    const first = await h.call(VERIFY, { verification_id: id, code: '123456' }, withKey('v'))
    expect(first.json).toMatchObject({ success: true, verified: true })
    expectError(await h.call(VERIFY, { verification_id: id, code: '654321' }, withKey('v')), 422, 'Idempotency-Key was already used with a different request')
    const again = await h.call(VERIFY, { code: '123456', verification_id: id }, withKey('v'))
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.json).toEqual(first.json)
  })
})

describe('cancel', () => {
  test('a replay answers the stored 200; an empty body and {} are the same body; another object is a different one', async () => {
    const h = await start()
    const t = await post(h, SEND, { channel: 'sms', recipient: TEST.PHONE_SUCCESS }, null)
    const path = cancelPath(t.json.verification_id)
    const first = await post(h, path, undefined, 'c', { contentType: null })
    expect(first.json).toMatchObject({ success: true, status: 'canceled' })
    expectReplay(await post(h, path, '{}', 'c'), first)
    expectReplay(await post(h, path, '', 'c', { contentType: 'text/plain' }), first)
    expectError(await post(h, path, { reason: 'x' }, 'c'), 422, 'Idempotency-Key was already used with a different request')
  })

  test('stored: the 409 of an approved verification and a 404', async () => {
    const h = await start()
    const t = await post(h, SEND, { channel: 'sms', recipient: TEST.PHONE_SUCCESS }, null)
    await post(h, VERIFY, { verification_id: t.json.verification_id, code: '123456' }, null)
    const first = await post(h, cancelPath(t.json.verification_id), undefined, 'c', { contentType: null })
    expectError(first, 409, 'Verification is already approved')
    expectReplay(await post(h, cancelPath(t.json.verification_id), undefined, 'c', { contentType: null }), first)
    const nf = await post(h, cancelPath('nope'), undefined, 'c', { contentType: null })
    expect(nf.status).toBe(404)
    expectReplay(await post(h, cancelPath('nope'), undefined, 'c', { contentType: null }), nf)
  })

  test('a 400 (bad body) and a 401 are not stored; the fixed request with the same key runs', async () => {
    const h = await start()
    const id = (await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).json.verification_id as string
    expectError(await h.call(cancelPath(id), undefined, { raw: '[1]', ...withKey('c') }), 400, 'Request body must be a JSON object')
    expectError(await h.call(cancelPath(id), undefined, { key: 'otpd_' + 'q'.repeat(40), ...withKey('c') }), 401, 'Invalid API key')
    expect((await statusOf(h, id)).json.status).toBe('pending')
    const first = await h.call(cancelPath(id), undefined, { raw: '', ...withKey('c') })
    expect(first.json).toMatchObject({ success: true, verification_id: id, status: 'canceled' })
    expect(first.headers.get('idempotent-replayed')).toBeNull()
  })
})

describe('a replay runs nothing, so it writes no event', () => {
  test('replays of a send, a wrong code, a right code and a cancel add no event', async () => {
    const h = await start({ credits: 3 })
    const body = { channel: 'sms', recipient: PHONE }
    const sent = await h.call(SEND, body, withKey('s'))
    const id = sent.json.verification_id as string
    const code = h.delivery.lastCode()
    await h.server.storage.settled()
    for (let i = 0; i < 3; i++) expect((await h.call(SEND, body, withKey('s'))).headers.get('idempotent-replayed')).toBe('true')
    expect(await eventTypes(h)).toEqual(['verification.sent'])
    const wrong = { verification_id: id, code: code === '000000' ? '111111' : '000000' }
    for (let i = 0; i < 3; i++) expect((await h.call(VERIFY, wrong, withKey('w'))).json.message).toBe('Invalid code')
    expect(await eventTypes(h)).toEqual(['verification.sent', 'verification.attempt_failed'])
    const other = (await h.send({ channel: 'sms', recipient: '+14155550124' })).json.verification_id as string
    await h.server.storage.settled()
    for (let i = 0; i < 3; i++) expect((await h.call(cancelPath(other), undefined, withKey('c'))).status).toBe(200)
    for (let i = 0; i < 3; i++) expect((await h.call(VERIFY, { verification_id: id, code }, withKey('r'))).json.verified).toBe(true)
    expect(await eventTypes(h)).toEqual([
      'verification.sent',
      'verification.attempt_failed',
      'verification.sent',
      'verification.canceled',
      'verification.approved',
    ])
  })

  test('a replayed test-recipient send writes no second verification.sent', async () => {
    const h = await start()
    for (let i = 0; i < 3; i++) await h.call(SEND, { channel: 'email', recipient: TEST.EMAIL_SUCCESS }, withKey('t'))
    expect(await eventTypes(h)).toEqual(['verification.sent'])
  })
})

describe('retention', () => {
  test('a key is kept retention_hours (default 24) after the first request, then it is new again; the sweep prunes it', async () => {
    const h = await start({ credits: 5 })
    const body = { channel: 'sms', recipient: PHONE }
    const t0 = h.clock.now()
    const first = await post(h, SEND, body, 'k')
    h.clock.set(t0 + 24 * 3_600_000 - 1)
    expect((await h.server.sweep()).idempotencyKeys).toBe(0)
    expectReplay(await post(h, SEND, body, 'k'), first)
    h.clock.set(t0 + 24 * 3_600_000)
    const again = await post(h, SEND, body, 'k')
    expect(again.status).toBe(200)
    expect(again.json.verification_id).not.toBe(first.json.verification_id)
    expect(h.delivery.sent).toHaveLength(2)
    h.clock.set(t0 + 48 * 3_600_000)
    expect((await h.server.sweep()).idempotencyKeys).toBe(1)
    expect(await count(h, 'SELECT count(*) AS n FROM idempotency_keys')).toBe(0)
  })

  test('idempotency.retention_hours sets it', async () => {
    const h = await start({ credits: 5, config: { idempotency: { retention_hours: 1 } } })
    const t0 = h.clock.now()
    await post(h, SEND, { channel: 'sms', recipient: TEST.PHONE_SUCCESS }, 'k')
    h.clock.set(t0 + 3_600_000 - 1)
    expect((await post(h, SEND, { channel: 'sms', recipient: TEST.PHONE_SUCCESS }, 'k')).headers.get('idempotent-replayed')).toBe('true')
    expect((await h.server.sweep()).idempotencyKeys).toBe(0)
    h.clock.set(t0 + 3_600_000)
    expect((await h.server.sweep()).idempotencyKeys).toBe(1)
    expect((await post(h, SEND, { channel: 'sms', recipient: TEST.PHONE_SUCCESS }, 'k')).headers.get('idempotent-replayed')).toBeNull()
  })
})

describe('a send left running by a process that stopped', () => {
  test('answers 409 until recovery settles the send as unknown, then the 200 the send answered', async () => {
    // The process stops during the delivery: no outcome is ever recorded.
    const stuck = new StuckDelivery()
    const h1 = await start({ credits: 2, delivery: stuck })
    const body = { channel: 'sms', recipient: PHONE, code: '4321' }
    void post(h1, SEND, body, 'k')
    while (!stuck.seen) await Bun.sleep(5)
    const seen = stuck.seen
    const firstRequestId = JSON.parse((await h1.sql('SELECT body FROM idempotency_keys'))[0]!.body).request_id as string
    // A restart on the same file, as after kill -9.
    const h2 = await h1.restart()
    h2.delivery.gate = null
    expectError(await post(h2, SEND, body, 'k'), 409, 'A request with this Idempotency-Key is still in progress')
    h2.clock.advance(10_000 + RECOVERY_MARGIN_MS + 1)
    expectError(await post(h2, SEND, body, 'k'), 409, 'A request with this Idempotency-Key is still in progress')
    expect(await h2.server.recover()).toBe(1)
    const replay = await post(h2, SEND, body, 'k')
    expect(replay.status).toBe(200)
    expect(replay.json).toEqual({
      success: true,
      verification_id: seen.verificationId,
      expires_at: new Date(seen.expiresAt).toISOString(),
      request_id: firstRequestId,
    })
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.headers.get('x-request-id')).toBe(firstRequestId)
    // In force: refunded as unknown, the code still verifies.
    expect((await h2.server.admin.balance()).balance).toBe(2)
    expect((await post(h2, VERIFY, { verification_id: seen.verificationId, code: '4321' }, null)).json.verified).toBe(true)
  })
})

describe('idempotency.retention_hours', () => {
  test('the config is strict: a whole number of hours from 1 to 8760, no unknown key; OTPD_IDEMPOTENCY__RETENTION_HOURS sets it', async () => {
    const { ConfigError, loadConfig } = await import('../../src/app/load-config.ts')
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const dir = mkdtempSync(`${tmpdir()}/otpd-idem-`)
    const problems = (toml: string): string[] => {
      writeFileSync(`${dir}/c.toml`, toml)
      try {
        loadConfig({ file: `${dir}/c.toml`, env: {} })
      } catch (err) {
        if (err instanceof ConfigError) return err.problems
        throw err
      }
      return []
    }
    try {
      expect(loadConfig({ env: {} }).config.idempotency.retention_hours).toBe(24)
      expect(problems('[idempotency]\nretention_hours = 0\n')).toEqual(['idempotency.retention_hours must be a whole number from 1 to 8760 (got 0)'])
      expect(problems('[idempotency]\nretention_hours = 8761\n')).toHaveLength(1)
      expect(problems('[idempotency]\nretention_hours = 1.5\n')).toHaveLength(1)
      expect(problems('[idempotency]\nretention = 3\n')).toHaveLength(1)
      expect(problems('[idempotency]\nretention_hours = 8760\n')).toEqual([])
      expect(loadConfig({ env: { OTPD_IDEMPOTENCY__RETENTION_HOURS: '2' } }).config.idempotency.retention_hours).toBe(2)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a reload changes it for the next request', async () => {
    const { resolveConfig } = await import('../../src/app/load-config.ts')
    const h = await start()
    const t0 = h.clock.now()
    await post(h, SEND, { channel: 'sms', recipient: TEST.PHONE_SUCCESS }, 'k')
    h.clock.set(t0 + 2 * 3_600_000)
    expect((await post(h, SEND, { channel: 'sms', recipient: TEST.PHONE_SUCCESS }, 'k')).headers.get('idempotent-replayed')).toBe('true')
    expect(h.server.reload(resolveConfig({ ...sameDatabase(h), idempotency: { retention_hours: 1 } }))).toEqual([])
    expect((await post(h, SEND, { channel: 'sms', recipient: TEST.PHONE_SUCCESS }, 'k')).headers.get('idempotent-replayed')).toBeNull()
  })
})

test('the path is the route in one spelling: a trailing slash or a percent-encoded id is the same scope', async () => {
  const h = await start({ credits: 2 })
  const first = await post(h, SEND, { channel: 'sms', recipient: PHONE }, 'k')
  expectReplay(await post(h, `${SEND}/`, { channel: 'sms', recipient: PHONE }, 'k'), first)
  const id = first.json.verification_id as string
  const cancel = await post(h, cancelPath(id), undefined, 'c', { contentType: null })
  expect(cancel.status).toBe(200)
  expectReplay(await post(h, `${cancelPath(id.replace('-', '%2D'))}/`, undefined, 'c', { contentType: null }), cancel)
  expect(h.delivery.sent).toHaveLength(1)
})
