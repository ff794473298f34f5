/**
 * GET /api/v1/openapi.json: a structurally valid OpenAPI 3.1 document whose
 * schemas describe what the server really answers. Real requests produce every
 * documented response of both endpoints; each body is checked against the
 * schema the served document gives for its path, method and status.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { check } from './json-schema.ts'
import { createHarness, TEST, type Harness } from './harness.ts'

const TOKEN = 'metrics-token-0123456789abcdef0123456789'
let h: Harness
let doc: Record<string, any>
beforeAll(async () => {
  h = await createHarness({ credits: 1, config: { server: { metrics_token: TOKEN }, limits: { recipient_per_minute: 1, key_requests_per_minute: 1000 } } })
  const res = await h.server.http.handle(new Request('http://localhost/api/v1/openapi.json'))
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toContain('application/json')
  doc = (await res.json()) as Record<string, any>
})
afterAll(() => h?.close())

const seen = new Set<string>()

/** The second request of a key allowed one per minute, on a server of its own. */
async function keyLimited(path: string, body: Record<string, unknown>) {
  const other = await createHarness({ config: { limits: { key_requests_per_minute: 1 } } })
  try {
    await other.call(path, body)
    const r = await other.call(path, body)
    expect(r.status).toBe(429)
    return r
  } finally {
    other.close()
  }
}

function schemaFor(path: string, method: string, status: number): Record<string, any> {
  const op = doc.paths[path]?.[method]
  expect(op, `${method} ${path} is documented`).toBeDefined()
  const res = op.responses[String(status)]
  expect(res, `${method} ${path} documents ${status}`).toBeDefined()
  return res.content['application/json'].schema
}

/** Checks a real response against the document, and that it carries the documented headers. */
function conforms(path: string, method: string, r: { status: number; json: unknown; headers: Headers }) {
  const problems = check(schemaFor(path, method, r.status), r.json, doc)
  expect(problems, `${method} ${path} ${r.status} ${JSON.stringify(r.json)}`).toEqual([])
  const headers = doc.paths[path][method].responses[String(r.status)].headers ?? {}
  for (const name of Object.keys(headers)) expect(r.headers.get(name), `${name} on ${r.status}`).not.toBeNull()
  seen.add(`${method} ${path} ${r.status}`)
}

test('the document is structurally OpenAPI 3.1, and every reference resolves', () => {
  expect(doc.openapi).toBe('3.1.0')
  expect(typeof doc.info.title).toBe('string')
  expect(typeof doc.info.version).toBe('string')
  expect(Object.keys(doc.paths).sort()).toEqual(['/api/v1/openapi.json', '/api/v1/send', '/api/v1/verify', '/healthz', '/metrics', '/readyz'])
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
    expect(path.startsWith('/')).toBe(true)
    for (const [method, op] of Object.entries<Record<string, any>>(item)) {
      expect(['get', 'post']).toContain(method)
      expect(typeof op.operationId).toBe('string')
      expect(Object.keys(op.responses).length).toBeGreaterThan(0)
      for (const status of Object.keys(op.responses)) expect(status).toMatch(/^[1-5][0-9]{2}$/)
      for (const req of op.security ?? []) for (const name of Object.keys(req)) expect(doc.components.securitySchemes[name]).toBeDefined()
    }
  }
  const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? []
  expect(refs.length).toBeGreaterThan(0)
  for (const r of refs) {
    const target = r.slice(8, -1).slice(2).split('/').reduce((n: any, p: string) => n?.[p], doc)
    expect(target, r).toBeDefined()
  }
  // The API key, as the spec describes it: Bearer (recommended) or x-api-key.
  expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
  expect(doc.components.securitySchemes.apiKeyHeader).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-api-key' })
  expect(doc.paths['/api/v1/send'].post.security).toEqual([{ bearerAuth: [] }, { apiKeyHeader: [] }])
  expect(doc.paths['/healthz'].get.security).toEqual([])
})

test('the request examples satisfy the request schemas, and the checker rejects a bad body', () => {
  for (const path of ['/api/v1/send', '/api/v1/verify']) {
    const content = doc.paths[path].post.requestBody.content['application/json']
    expect(Object.keys(content.examples).length).toBeGreaterThan(0)
    for (const ex of Object.values<{ value: unknown }>(content.examples)) expect(check(content.schema, ex.value, doc)).toEqual([])
  }
  const sendSchema = doc.paths['/api/v1/send'].post.requestBody.content['application/json'].schema
  expect(check(sendSchema, { channel: 'fax', recipient: '+14155550123' }, doc)).not.toEqual([])
  expect(check(sendSchema, { channel: 'sms', recipient: '+14155550123', expires_in: 59 }, doc)).not.toEqual([])
  // A 400 body is not a send success: the response check can fail.
  expect(check(schemaFor('/api/v1/send', 'post', 200), { error: 'Not found', request_id: '00000000-0000-4000-8000-000000000000' }, doc)).not.toEqual([])
})

test('every documented send response is what the server answers', async () => {
  const send = (body: Record<string, unknown>, key?: string) => h.send(body, key)
  const post = '/api/v1/send'
  conforms(post, 'post', await send({ channel: 'sms', recipient: '+14155550123' })) // 200, the last credit
  conforms(post, 'post', await send({ channel: 'sms', recipient: '+14155550123' })) // 429 per recipient
  conforms(post, 'post', await send({ channel: 'sms', recipient: '+14155550124' })) // 402
  conforms(post, 'post', await send({ channel: 'email', recipient: TEST.EMAIL_SUCCESS }))
  for (const body of [
    { channel: 'fax', recipient: '+14155550123' },
    { channel: 'sms', recipient: '4155550123' },
    { channel: 'email', recipient: 'not-an-address' },
    { channel: 'sms', recipient: TEST.PHONE_SUCCESS, message: 'no placeholder' },
    { channel: 'sms', recipient: TEST.PHONE_SUCCESS, message: '' },
    { channel: 'sms', recipient: TEST.PHONE_SUCCESS, subject: 'a\nb' },
    { channel: 'sms', recipient: TEST.PHONE_SUCCESS, expires_in: 5000 },
    { channel: 'sms', recipient: TEST.PHONE_SUCCESS, code: '12' },
  ]) {
    const r = await send(body)
    expect(r.status).toBe(400)
    conforms(post, 'post', r)
  }
  for (const raw of ['{', '[1]']) conforms(post, 'post', await h.call(post, undefined, { raw }))
  conforms(post, 'post', await h.call(post, undefined, { raw: '{}', headers: { 'content-type': 'text/plain' } }))
  conforms(post, 'post', await h.call(post, undefined, { raw: JSON.stringify({ pad: 'x'.repeat(20_000) }) })) // 413
  conforms(post, 'post', await h.call(post, {}, { key: null })) // 401 required
  conforms(post, 'post', await send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS }, 'otpd_' + 'A'.repeat(40))) // 401 invalid
  const disabled = await h.server.admin.createKey({ name: 'off' })
  await h.server.admin.setKeyStatus(String(disabled.id), 'disabled')
  conforms(post, 'post', await send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS }, disabled.key)) // 403
  await h.server.admin.addCredits(1)
  h.delivery.fail = true
  conforms(post, 'post', await send({ channel: 'voice', recipient: '+14155550125' })) // 500
  h.delivery.fail = false
  conforms(post, 'post', await keyLimited(post, { channel: 'sms', recipient: TEST.PHONE_SUCCESS })) // 429 per key

  const documented = Object.keys(doc.paths[post].post.responses).map((s) => `post ${post} ${s}`)
  expect([...seen].filter((s) => s.startsWith(`post ${post} `)).sort()).toEqual(documented.sort())
})

test('every documented verify response is what the server answers', async () => {
  const post = '/api/v1/verify'
  const sent = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  const id = sent.json.verification_id
  for (let i = 0; i < 5; i++) conforms(post, 'post', await h.verify({ verification_id: id, code: '000000' })) // 200 Invalid code
  const locked = await h.verify({ verification_id: id, code: '123456' })
  expect(locked.status).toBe(429)
  conforms(post, 'post', locked)
  const ok = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  conforms(post, 'post', await h.verify({ verification_id: ok.json.verification_id, code: '123456' }))
  conforms(post, 'post', await h.verify({ verification_id: ok.json.verification_id, code: '123456' })) // already used
  const expired = await h.send({ channel: 'sms', recipient: TEST.PHONE_EXPIRED })
  conforms(post, 'post', await h.verify({ verification_id: expired.json.verification_id, code: '123456' }))
  conforms(post, 'post', await h.verify({ verification_id: 'nope', code: '123456' })) // 404
  for (const body of [{ code: '123456' }, { verification_id: 'x' }, { verification_id: 'x', code: 'abc' }]) conforms(post, 'post', await h.verify(body))
  conforms(post, 'post', await h.call(post, undefined, { raw: '"x"' }))
  conforms(post, 'post', await h.call(post, undefined, { raw: JSON.stringify({ pad: 'x'.repeat(20_000) }) })) // 413
  conforms(post, 'post', await h.call(post, {}, { key: null })) // 401
  const disabled = await h.server.admin.createKey({ name: 'off2' })
  await h.server.admin.setKeyStatus(String(disabled.id), 'disabled')
  conforms(post, 'post', await h.verify({ verification_id: id, code: '123456' }, disabled.key)) // 403
  const limited = await keyLimited(post, { verification_id: id, code: '123456' })
  expect(limited.json.error).toContain('requests per minute')
  conforms(post, 'post', limited) // 429, the error-shaped variant

  const documented = Object.keys(doc.paths[post].post.responses).filter((s) => s !== '500')
  expect([...seen].filter((s) => s.startsWith(`post ${post} `)).map((s) => s.split(' ')[2]).sort()).toEqual([...new Set(documented)].sort())
})

test('operator endpoints and the 404/405 answers match the document', async () => {
  const get = (path: string, headers: Record<string, string> = {}) => h.call(path, undefined, { method: 'GET', key: null, headers })
  conforms('/healthz', 'get', await get('/healthz'))
  conforms('/readyz', 'get', await get('/readyz'))
  conforms('/metrics', 'get', await get('/metrics'))
  conforms('/metrics', 'get', await get('/metrics', { authorization: 'Bearer wrong' }))
  const notFound = await get('/api/v1/nothing')
  expect(check(doc.components.responses.NotFound.content['application/json'].schema, notFound.json, doc)).toEqual([])
  const wrongMethod = await h.call('/api/v1/send', undefined, { method: 'GET' })
  expect(check(doc.components.responses.MethodNotAllowed.content['application/json'].schema, wrongMethod.json, doc)).toEqual([])
  await h.failWrites(true)
  conforms('/readyz', 'get', await get('/readyz'))
  await h.failWrites(false)
})

// Last: it closes the database under the server.
test('the 500 of verify matches the document', async () => {
  if (h.server.pg) await h.server.pg.close()
  else h.server.db!.$client.close()
  conforms('/api/v1/verify', 'post', await h.verify({ verification_id: 'x', code: '123456' }))
})
