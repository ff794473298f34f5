/**
 * Routing, request ids, body handling and the order of checks
 * (docs/api.md#order-of-checks, docs/api.md#request-bodies-and-validation,
 * docs/api.md#errors).
 */
import { describe, expect, test } from 'bun:test'
import { expectError, harnessPerTest, TEST, UUID_V4, type Harness, type Result } from '../kit/harness.ts'

const SEND = '/api/v1/send'
const VERIFY = '/api/v1/verify'
const MAX_BODY = 16 * 1024

let h: Harness
const start = harnessPerTest()

/** A request built by hand: no default headers, so Content-Type can be left out. */
async function rawRequest(path: string, init: RequestInit): Promise<Result> {
  const res = await h.server.http.handle(new Request(`http://localhost${path}`, init))
  const text = await res.text()
  return { status: res.status, headers: res.headers, json: JSON.parse(text) }
}

/** A JSON object of exactly `size` bytes that is a valid send to a test recipient. */
function sendBodyOfSize(size: number): string {
  const head = `{"channel":"sms","recipient":"${TEST.PHONE_SUCCESS}","pad":"`
  const tail = '"}'
  return head + 'x'.repeat(size - head.length - tail.length) + tail
}

describe('routing', () => {
  for (const path of ['/', '/api/v1', '/api/v1/nope', '/api/v2/send', '/API/V1/SEND', '/api/v1/sends']) {
    test(`unknown path ${path} -> 404 Not found`, async () => {
      h = await start()
      expectError(await h.call(path, {}), 404, 'Not found')
    })
  }

  for (const path of [SEND, VERIFY]) {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      test(`${method} ${path} -> 405 Method not allowed`, async () => {
        h = await start()
        expectError(await h.call(path, method === 'GET' ? undefined : {}, { method }), 405, 'Method not allowed')
      })
    }
  }

  test('routing comes before authentication: 404 and 405 without any key', async () => {
    h = await start()
    expectError(await h.call('/api/v1/nope', {}, { key: null }), 404, 'Not found')
    expectError(await h.call(SEND, undefined, { method: 'GET', key: null }), 405, 'Method not allowed')
    expectError(await h.call(VERIFY, {}, { method: 'DELETE', key: 'garbage' }), 405, 'Method not allowed')
  })
})

describe('request ids and content type', () => {
  test('every kind of response carries a lower-case v4 request_id equal to X-Request-Id', async () => {
    h = await start({ config: { limits: { key_requests_per_minute: 4 } } })
    const sent = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
    const responses: [number, Result][] = [
      [200, sent],
      [200, await h.verify({ verification_id: sent.json.verification_id, code: '000000' })],
      [400, await h.verify({ code: '123456' })],
      [404, await h.verify({ verification_id: crypto.randomUUID(), code: '123456' })],
      [429, await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })],
      [401, await h.call(SEND, {}, { key: null })],
      [404, await h.call('/nope', {})],
      [405, await h.call(VERIFY, undefined, { method: 'GET' })],
    ]
    const ids = new Set<string>()
    for (const [status, r] of responses) {
      expect(r.status).toBe(status)
      expect(r.headers.get('content-type')).toMatch(/^application\/json(;|$)/)
      const id = r.headers.get('x-request-id')
      expect(id).toMatch(UUID_V4)
      expect(r.json.request_id).toBe(id!)
      ids.add(id!)
    }
    expect(ids.size).toBe(responses.length)
  })
})

describe('body size', () => {
  test(`a body of exactly ${MAX_BODY} bytes is accepted`, async () => {
    h = await start()
    const raw = sendBodyOfSize(MAX_BODY)
    expect(Buffer.byteLength(raw)).toBe(MAX_BODY)
    const r = await h.call(SEND, undefined, { raw })
    expect(r.status).toBe(200)
    expect(r.json.verification_id).toMatch(UUID_V4)
  })

  test(`a body of ${MAX_BODY + 1} bytes -> 413 Request body too large`, async () => {
    h = await start()
    const raw = sendBodyOfSize(MAX_BODY + 1)
    expect(Buffer.byteLength(raw)).toBe(MAX_BODY + 1)
    expectError(await h.call(SEND, undefined, { raw }), 413, 'Request body too large')
    expectError(await h.call(VERIFY, undefined, { raw: 'x'.repeat(MAX_BODY + 1) }), 413, 'Request body too large')
  })

  test('a streamed body (no Content-Length) over the cap -> 413', async () => {
    h = await start()
    const chunk = new TextEncoder().encode(sendBodyOfSize(MAX_BODY + 1))
    const body = new ReadableStream({
      start(c) {
        c.enqueue(chunk.slice(0, 8000))
        c.enqueue(chunk.slice(8000))
        c.close()
      },
    })
    const init = { method: 'POST', body, duplex: 'half', headers: { 'content-type': 'application/json', authorization: `Bearer ${h.key}` } }
    expectError(await rawRequest(SEND, init as RequestInit), 413, 'Request body too large')
  })
})

describe('Content-Type', () => {
  const auth = () => ({ authorization: `Bearer ${h.key}` })
  const body = JSON.stringify({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })

  test('missing Content-Type -> 400', async () => {
    h = await start()
    for (const path of [SEND, VERIFY]) {
      expectError(await rawRequest(path, { method: 'POST', body, headers: auth() }), 400, 'Content-Type must be application/json')
    }
  })

  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx', 'multipart/form-data; boundary=x']) {
    test(`Content-Type ${type} -> 400`, async () => {
      h = await start()
      expectError(await h.call(SEND, undefined, { raw: body, headers: { 'content-type': type } }), 400, 'Content-Type must be application/json')
    })
  }

  for (const type of ['application/json; charset=utf-8', 'Application/JSON', 'application/json;charset=UTF-8']) {
    test(`Content-Type ${type} is accepted`, async () => {
      h = await start()
      expect((await h.call(SEND, undefined, { raw: body, headers: { 'content-type': type } })).status).toBe(200)
    })
  }
})

describe('JSON parsing', () => {
  const invalid: [string, string | Uint8Array][] = [
    ['truncated', '{"channel":"sms","recipient":"+1555'],
    ['empty body', ''],
    ['single quotes', "{'a':1}"],
    ['trailing comma', '{"a":1,}'],
    ['invalid UTF-8', new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])],
  ]
  for (const path of [SEND, VERIFY]) {
    for (const [name, raw] of invalid) {
      test(`${path}: ${name} -> 400 Request body must be valid JSON`, async () => {
        h = await start()
        expectError(await h.call(path, undefined, { raw }), 400, 'Request body must be valid JSON')
      })
    }
    for (const raw of ['[]', '"x"', '1', 'null', 'true', '[{"channel":"sms"}]']) {
      test(`${path}: ${raw} -> 400 Request body must be a JSON object`, async () => {
        h = await start()
        expectError(await h.call(path, undefined, { raw }), 400, 'Request body must be a JSON object')
      })
    }
  }

  test('unknown fields are ignored', async () => {
    h = await start()
    const r = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS, extra: { nested: [1, 2] } })
    expect(r.status).toBe(200)
  })
})

describe('order of checks', () => {
  test('authentication (401/403) beats a bad body', async () => {
    h = await start()
    expectError(
      await h.call(SEND, undefined, { key: null, raw: '{not json' }),
      401,
      'API key is required. Provide it via Authorization: Bearer <token> or x-api-key header',
    )
    expectError(await h.call(VERIFY, undefined, { key: 'otpd_nope', raw: 'x'.repeat(MAX_BODY + 1) }), 401, 'Invalid API key')
    const k = await h.server.admin.createKey({ name: 'off' })
    await h.server.admin.setKeyStatus(k.prefix, 'disabled')
    expectError(await h.call(SEND, undefined, { key: k.key, raw: '[]', headers: { 'content-type': 'text/plain' } }), 403, 'API key is disabled')
  })

  test('the per-key rate limit (429) beats a bad body', async () => {
    h = await start({ config: { limits: { key_requests_per_minute: 3 } } })
    for (let i = 0; i < 3; i++) expect((await h.call(SEND, undefined, { raw: '{' })).status).toBe(400)
    const bad: Parameters<Harness['call']>[2][] = [
      { raw: '{' },
      { raw: '[]' },
      { raw: 'x'.repeat(MAX_BODY + 1) },
      { raw: '{}', headers: { 'content-type': 'text/plain' } },
    ]
    for (const opts of bad) {
      const r = await h.call(VERIFY, undefined, opts)
      expect(r.status).toBe(429)
      expect(r.json).toEqual({
        error: 'Rate limit exceeded: Maximum 3 requests per minute. Please try again in 60 seconds.',
        request_id: r.headers.get('x-request-id'),
        retry_after: 60,
      })
    }
  })

  test('body errors beat field validation', async () => {
    h = await start()
    const badFields = JSON.stringify({ channel: 'fax', code: 'abc' })
    expectError(await h.call(SEND, undefined, { raw: badFields, headers: { 'content-type': 'text/plain' } }), 400, 'Content-Type must be application/json')
    expectError(await h.call(VERIFY, undefined, { raw: `{"code":"1","pad":"${'x'.repeat(MAX_BODY)}"}` }), 413, 'Request body too large')
    // With a good body, the same fields are reported by validation.
    expectError(await h.call(SEND, undefined, { raw: badFields }), 400, 'channel is required and must be one of: sms, email, voice, whatsapp')
    expectError(await h.call(VERIFY, {}), 400, 'verification_id is required')
  })
})
