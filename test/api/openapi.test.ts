/**
 * GET /api/v1/openapi.json: a structurally valid OpenAPI 3.1 document whose
 * schemas describe what the server really answers. Real requests produce every
 * documented response of both endpoints; each body is checked against the
 * schema the served document gives for its path, method and status.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { check, resolveRef } from '../kit/json-schema.ts'
import { resolveConfig } from '../../src/config/load.ts'
import { webhookSignature } from '../../src/delivery/webhook-provider.ts'
import { closeDatabaseUnder, createHarness, TEST, type Harness } from '../kit/harness.ts'

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
async function keyLimited(path: string, body: Record<string, unknown> | undefined, method = 'POST') {
  const other = await createHarness({ config: { limits: { key_requests_per_minute: 1 } } })
  try {
    await other.call(path, body, { method })
    const r = await other.call(path, body, { method })
    expect(r.status).toBe(429)
    return r
  } finally {
    other.close()
  }
}

const resolve = (node: Record<string, any>) => resolveRef(doc, node)

function responseFor(path: string, method: string, status: number): Record<string, any> {
  const op = doc.paths[path]?.[method]
  expect(op, `${method} ${path} is documented`).toBeDefined()
  const res = op.responses[String(status)]
  expect(res, `${method} ${path} documents ${status}`).toBeDefined()
  return resolve(res)
}

function schemaFor(path: string, method: string, status: number): Record<string, any> {
  return responseFor(path, method, status).content['application/json'].schema
}

/** Checks a real response against the document, and that it carries the documented required headers. */
function conforms(path: string, method: string, r: { status: number; json: unknown; headers: Headers }) {
  const problems = check(schemaFor(path, method, r.status), r.json, doc)
  expect(problems, `${method} ${path} ${r.status} ${JSON.stringify(r.json)}`).toEqual([])
  const headers = responseFor(path, method, r.status).headers ?? {}
  for (const [name, h] of Object.entries<Record<string, any>>(headers)) {
    if (resolve(h).required) expect(r.headers.get(name), `${name} on ${r.status}`).not.toBeNull()
  }
  seen.add(`${method} ${path} ${r.status}`)
}

/**
 * Documented answers no request draws here: a send is never 404 (documented
 * on every operation for generated clients); a verify is too quick to catch
 * the Idempotency-Key in-progress 409 (send's is drawn, the rule is the same).
 */
const NOT_DRAWN: Record<string, string[]> = { '/api/v1/send': ['404'], '/api/v1/verify': ['409'] }

/** Two requests with one Idempotency-Key: the second, with `second` as its body, answers 422. */
async function idempotencyConflict(path: string, first: unknown, second: unknown) {
  const key = `conflict-${crypto.randomUUID()}`
  await h.call(path, first, { headers: { 'idempotency-key': key } })
  const r = await h.call(path, second, { headers: { 'idempotency-key': key } })
  expect(r.status).toBe(422)
  return r
}

test('the document is structurally OpenAPI 3.1, and every reference resolves', () => {
  expect(doc.openapi).toBe('3.1.0')
  expect(typeof doc.info.title).toBe('string')
  expect(typeof doc.info.version).toBe('string')
  expect(Object.keys(doc.paths).sort()).toEqual([
    '/api/v1/openapi.json',
    '/api/v1/receipts/{provider}',
    '/api/v1/send',
    '/api/v1/verifications/{verification_id}',
    '/api/v1/verifications/{verification_id}/cancel',
    '/api/v1/verifications/{verification_id}/next',
    '/api/v1/verify',
    '/console/api/accounts',
    '/console/api/accounts/{account}',
    '/console/api/accounts/{account}/credits/add',
    '/console/api/accounts/{account}/credits/deduct',
    '/console/api/accounts/{account}/ledger',
    '/console/api/audit',
    '/console/api/events/{event_id}/replay',
    '/console/api/fraud/unblock',
    '/console/api/keys',
    '/console/api/keys/{key}/disable',
    '/console/api/keys/{key}/enable',
    '/console/api/keys/{key}/revoke',
    '/console/api/session',
    '/console/api/verifications/search',
    '/healthz',
    '/metrics',
    '/readyz',
  ])
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
    expect(path.startsWith('/')).toBe(true)
    for (const [method, op] of Object.entries<Record<string, any>>(item)) {
      if (method === 'parameters') continue
      // The console's JSON API also signs out (DELETE) and changes an account's settings (PATCH).
      expect(path.startsWith('/console/api/') ? ['get', 'post', 'patch', 'delete'] : ['get', 'post']).toContain(method)
      expect(typeof op.operationId).toBe('string')
      expect(Object.keys(op.responses).length).toBeGreaterThan(0)
      for (const status of Object.keys(op.responses)) expect(status).toMatch(/^[1-5][0-9]{2}$/)
      for (const req of op.security ?? []) for (const name of Object.keys(req)) expect(doc.components.securitySchemes[name]).toBeDefined()
    }
  }
  const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? []
  expect(refs.length).toBeGreaterThan(0)
  for (const r of refs) {
    const target = r
      .slice(8, -1)
      .slice(2)
      .split('/')
      .reduce((n: any, p: string) => n?.[p], doc)
    expect(target, r).toBeDefined()
  }
  // The API key, as docs/api.md#authentication describes it: Bearer (recommended) or x-api-key.
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
  // The recipient follows the channel: the schema refuses an email on sms or voice, and a phone on email.
  expect(check(sendSchema, { channel: 'sms', recipient: 'ann@example.com' }, doc)).not.toEqual([])
  expect(check(sendSchema, { channel: 'voice', recipient: 'ann@example.com' }, doc)).not.toEqual([])
  expect(check(sendSchema, { channel: 'email', recipient: '+14155550123' }, doc)).not.toEqual([])
  expect(check(sendSchema, { channel: 'sms', recipient: '+14155550123', ip: '203.0.113.7' }, doc)).toEqual([])
  // A send names `channel` (one body per channel, told apart by it) or `workflow` (docs/api.md#workflows), never both.
  expect(doc.components.schemas.ChannelSendBody.discriminator.propertyName).toBe('channel')
  expect(check(sendSchema, { recipient: '+14155550123', workflow: [{ channel: 'whatsapp' }, { channel: 'sms' }], channel_timeout: 30 }, doc)).toEqual([])
  expect(check(sendSchema, { channel: 'sms', recipient: '+14155550123', workflow: [{ channel: 'sms' }] }, doc)).not.toEqual([])
  expect(check(sendSchema, { recipient: '+14155550123', workflow: [] }, doc)).not.toEqual([])
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

  conforms(post, 'post', await h.call(post, undefined, { method: 'GET' })) // 405
  conforms(post, 'post', await send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS }, undefined)) // 200 again
  conforms(post, 'post', await h.call(post, { channel: 'sms', recipient: TEST.PHONE_SUCCESS }, { headers: { 'idempotency-key': 'bad key' } })) // 400
  conforms(post, 'post', await idempotencyConflict(post, { channel: 'sms', recipient: TEST.PHONE_SUCCESS }, { channel: 'sms', recipient: TEST.PHONE_FAIL }))
  // 409 while the first request with the key is still delivering; then its stored answer, replayed.
  await h.server.admin.addCredits(1)
  let release!: () => void
  h.delivery.gate = new Promise<void>((r) => (release = r))
  const body = { channel: 'sms', recipient: '+14155550188' }
  const first = h.call(post, body, { headers: { 'idempotency-key': 'slow-send' } })
  // The first one holds its key once its send is recorded, waiting on the gate.
  const sending = async () => Number((await h.sql("SELECT count(*) AS n FROM verifications WHERE delivery = 'sending'"))[0]!.n)
  while ((await sending()) === 0) await Bun.sleep(2)
  const running = await h.call(post, body, { headers: { 'idempotency-key': 'slow-send' } })
  expect(running.status).toBe(409)
  conforms(post, 'post', running)
  // 503 while this node's ceiling on sends in flight (lowered to the one under way) is reached.
  const config = h.server.config
  h.server.reload(resolveConfig({ ...config, delivery: { ...config.delivery, max_sends_in_flight: 1 } }))
  const overloaded = await send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  expect(overloaded.status).toBe(503)
  conforms(post, 'post', overloaded)
  h.server.reload(config)
  h.delivery.gate = null
  release()
  expect((await first).status).toBe(200)
  const replay = await h.call(post, body, { headers: { 'idempotency-key': 'slow-send' } })
  expect(replay.headers.get('idempotent-replayed')).toBe('true')
  conforms(post, 'post', replay)

  const documented = Object.keys(doc.paths[post].post.responses)
    .filter((s) => !NOT_DRAWN[post]!.includes(s))
    .map((s) => `post ${post} ${s}`)
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

  conforms(post, 'post', await h.call(post, undefined, { method: 'PUT' })) // 405
  conforms(post, 'post', await idempotencyConflict(post, { verification_id: id, code: '123456' }, { verification_id: id, code: '654321' }))

  const documented = Object.keys(doc.paths[post].post.responses).filter((s) => s !== '500' && !NOT_DRAWN[post]!.includes(s))
  expect(
    [...seen]
      .filter((s) => s.startsWith(`post ${post} `))
      .map((s) => s.split(' ')[2])
      .sort(),
  ).toEqual([...new Set(documented)].sort())
})

test('every documented status and cancel response is what the server answers', async () => {
  const status = '/api/v1/verifications/{verification_id}'
  const cancel = '/api/v1/verifications/{verification_id}/cancel'
  const get = (id: string, key?: string | null) => h.call(`/api/v1/verifications/${id}`, undefined, { method: 'GET', key })
  const post = (id: string, opts: { key?: string | null; raw?: string; headers?: Record<string, string> } = {}) =>
    h.call(`/api/v1/verifications/${id}/cancel`, undefined, { raw: opts.raw ?? '', key: opts.key, headers: opts.headers })
  const pending = (await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).json.verification_id
  conforms(status, 'get', await get(pending))
  conforms(status, 'get', await get('6f1c2b9e-3d4a-4c5b-8e7f-0a1b2c3d4e5f')) // 404
  conforms(status, 'get', await get(pending, null)) // 401
  const disabled = await h.server.admin.createKey({ name: 'off3' })
  await h.server.admin.setKeyStatus(String(disabled.id), 'disabled')
  conforms(status, 'get', await get(pending, disabled.key)) // 403
  conforms(status, 'get', await h.call(`/api/v1/verifications/${pending}`, undefined, { method: 'DELETE' })) // 405
  conforms(status, 'get', await keyLimited(`/api/v1/verifications/${pending}`, undefined, 'GET')) // 429
  // A real send shows its delivery.
  await h.server.admin.addCredits(1)
  const real = await h.send({ channel: 'sms', recipient: '+14155550177' })
  await h.server.storage.settled()
  const shown = await get(real.json.verification_id)
  expect(shown.json.delivery).toMatchObject({ status: 'accepted', provider: 'recording' })
  conforms(status, 'get', shown)

  conforms(cancel, 'post', await post(pending, { headers: { 'idempotency-key': 'cancel-1' } })) // 200
  conforms(cancel, 'post', await post(pending)) // 200, again
  const used = (await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).json.verification_id
  await h.verify({ verification_id: used, code: '123456' })
  conforms(cancel, 'post', await post(used)) // 409 already approved
  conforms(cancel, 'post', await post('6f1c2b9e-3d4a-4c5b-8e7f-0a1b2c3d4e5f')) // 404
  conforms(cancel, 'post', await post(pending, { raw: '[1]' })) // 400
  conforms(cancel, 'post', await post(pending, { raw: 'x', headers: { 'content-type': 'text/plain' } })) // 400
  conforms(cancel, 'post', await post(pending, { headers: { 'idempotency-key': '' } })) // 400
  conforms(cancel, 'post', await post(pending, { raw: JSON.stringify({ pad: 'x'.repeat(20_000) }) })) // 413
  conforms(cancel, 'post', await post(pending, { key: null })) // 401
  conforms(cancel, 'post', await post(pending, { key: disabled.key })) // 403
  conforms(cancel, 'post', await h.call(`/api/v1/verifications/${pending}/cancel`, undefined, { method: 'GET' })) // 405
  conforms(cancel, 'post', await post(pending, { raw: '{"a":1}', headers: { 'idempotency-key': 'cancel-1' } })) // 422
  conforms(cancel, 'post', await keyLimited(`/api/v1/verifications/${pending}/cancel`, {})) // 429

  for (const [path, method] of [
    [status, 'get'],
    [cancel, 'post'],
  ] as const) {
    const documented = Object.keys(doc.paths[path][method].responses).filter((s) => s !== '500')
    expect(
      [...seen]
        .filter((s) => s.startsWith(`${method} ${path} `))
        .map((s) => s.split(' ')[2])
        .sort(),
    ).toEqual(documented.sort())
  }
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

/** Every operation of the document, with its path and method. */
function operations(): { path: string; method: string; op: Record<string, any> }[] {
  return Object.entries<Record<string, any>>(doc.paths).flatMap(([path, item]) =>
    Object.entries<Record<string, any>>(item)
      .filter(([m]) => m !== 'parameters')
      .map(([method, op]) => ({ path, method, op })),
  )
}

test('what a generated client needs: servers, tags, 404 and 405 everywhere, an example on every response, one ErrorResponse', () => {
  expect(doc.servers).toHaveLength(1)
  expect(doc.servers[0].url).toBe('{origin}')
  expect(doc.servers[0].variables.origin.default).toBe('http://127.0.0.1:8080')
  const tagNames = doc.tags.map((t: { name: string }) => t.name)
  expect(tagNames).toEqual(['Verifications', 'Receipts', 'Operations', 'Console'])
  for (const { path, method, op } of operations()) {
    const where = `${method} ${path}`
    expect(op.tags?.length, `${where} has a tag`).toBe(1)
    expect(tagNames).toContain(op.tags[0])
    expect(op.responses['404'], `${where} documents 404`).toBeDefined()
    expect(op.responses['405'], `${where} documents 405`).toBeDefined()
    for (const [status, raw] of Object.entries<Record<string, any>>(op.responses)) {
      const res = resolve(raw)
      for (const [type, media] of Object.entries<Record<string, any>>(res.content ?? {})) {
        const examples = media.example !== undefined ? [media.example] : Object.values<{ value: unknown }>(media.examples ?? {}).map((e) => e.value)
        expect(examples.length, `${where} ${status} ${type} has an example`).toBeGreaterThan(0)
        if (type === 'application/json') for (const ex of examples) expect(check(media.schema, ex, doc), `${where} ${status} example`).toEqual([])
      }
      // Every JSON answer carries its request id (the document itself, served as a file, excepted).
      if (res.content?.['application/json'] && !(path === '/api/v1/openapi.json' && status === '200'))
        expect(res.headers?.['X-Request-Id'], `${where} ${status} X-Request-Id`).toBeDefined()
      // Every error body is the named ErrorResponse, narrowed to its messages (the verify lockout and /readyz keep their own shapes beside it).
      if (Number(status) >= 400 && !(path === '/readyz' && status === '503')) {
        const schema = res.content['application/json'].schema
        const variants = schema.oneOf ?? [schema]
        expect(
          variants.some((v: Record<string, any>) => v.allOf?.[0]?.$ref === '#/components/schemas/ErrorResponse'),
          `${where} ${status} uses ErrorResponse`,
        ).toBe(true)
      }
    }
  }
  // Idempotency-Key on send, verify and cancel; Retry-After on every 429.
  for (const [path, method] of [
    ['/api/v1/send', 'post'],
    ['/api/v1/verify', 'post'],
    ['/api/v1/verifications/{verification_id}/cancel', 'post'],
  ] as const) {
    const op = doc.paths[path][method]
    expect(op.parameters.map((p: Record<string, any>) => resolve(p).name)).toContain('Idempotency-Key')
    for (const status of ['400', '409', '422']) expect(op.responses[status], `${path} ${status}`).toBeDefined()
    expect(Object.keys(op.responses['200'].headers)).toContain('Idempotent-Replayed')
    const messages = JSON.stringify(op.responses)
    for (const m of [
      'Idempotency-Key must be 1-255 visible ASCII characters',
      'Idempotency-Key was already used with a different request',
      'A request with this Idempotency-Key is still in progress',
    ]) {
      expect(messages).toContain(m)
    }
  }
  for (const { op } of operations()) if (op.responses['429']) expect(Object.keys(resolve(op.responses['429']).headers)).toContain('Retry-After')
})

test('fixed value sets are enums; the five test recipients are documented', () => {
  const s = doc.components.schemas
  expect(s.VerifyResponse.properties.message.enum).toEqual(['Code verified successfully', 'Invalid code', 'Code expired', 'Code already used'])
  expect(s.StatusResponse.properties.channel.enum).toEqual(['sms', 'email', 'voice', 'whatsapp'])
  expect(s.StatusResponse.properties.status.enum).toEqual(['pending', 'approved', 'expired', 'locked', 'canceled', 'failed'])
  expect(s.StatusResponse.properties.delivery.anyOf[0].properties.status.enum).toEqual(['sending', 'accepted', 'delivered', 'undelivered', 'failed', 'unknown'])
  expect(s.WebhookReceipt.properties.status.enum).toEqual(['delivered', 'undelivered'])
  expect(JSON.stringify(doc)).not.toContain('"anyOf":[{"const"')
  const examples = doc.paths['/api/v1/send'].post.requestBody.content['application/json'].examples
  const recipients = Object.values<{ value: { recipient: string } }>(examples).map((e) => e.value.recipient)
  for (const r of Object.values(TEST)) {
    expect(recipients).toContain(r)
    expect(doc.info.description).toContain(`\`${r}\``)
  }
  // The send's 403 and 429 carry the fraud guard's messages (docs/api.md#fraud-guard), the 400 the ip field's.
  const send = JSON.stringify(doc.paths['/api/v1/send'].post.responses)
  expect(send).toContain('ip must be a valid IPv4 or IPv6 address')
  const sendSchema = (status: number) => schemaFor('/api/v1/send', 'post', status)
  const error = (status: number, message: string) =>
    check(sendSchema(status), { error: message, request_id: '00000000-0000-4000-8000-000000000000', ...(status === 429 ? { retry_after: 5 } : {}) }, doc)
  expect(error(403, 'Sending to this destination country is not allowed: UZ')).toEqual([])
  expect(error(429, 'Rate limit exceeded: Maximum 10 verification codes per hour for this IP address. Please try again in 60 seconds.')).toEqual([])
  expect(error(429, 'Sending to this destination is temporarily blocked (suspected SMS pumping). Please try again in 900 seconds.')).toEqual([])
  expect(error(429, 'Daily credit limit of 100 reached for this account. Please try again in 3600 seconds.')).toEqual([])
  expect(error(429, 'Daily credit limit of 100 reached for this account.')).not.toEqual([])
})

test('every documented receipts response is what the server answers', async () => {
  const secret = 'whsec-gateway-0123456789abcdef'
  const stub = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(null, { status: 204 }) })
  const r = await createHarness({
    credits: 1,
    configuredDelivery: true,
    env: { HOOK_SECRET: secret },
    config: {
      server: { public_url: 'https://otp.example.com' },
      providers: { gateway: { type: 'webhook', url: `http://127.0.0.1:${stub.port}/otp`, secret_env: 'HOOK_SECRET' } },
      channels: { sms: ['gateway'] },
    },
  })
  try {
    const path = '/api/v1/receipts/{provider}'
    const id = (await r.send({ channel: 'sms', recipient: '+14155550123' })).json.verification_id
    const post = (body: string, signed = true, name = 'gateway') =>
      r.call(`/api/v1/receipts/${name}`, undefined, {
        key: null,
        raw: body,
        headers: signed ? { 'x-otpd-signature': webhookSignature(secret, Math.floor(r.clock.now() / 1000), body) } : {},
      })
    conforms(path, 'post', await post(JSON.stringify({ verification_id: id, status: 'delivered' })))
    conforms(path, 'post', await post('{'))
    conforms(path, 'post', await post('{}', false))
    conforms(path, 'post', await post('{}', true, 'nobody'))
    conforms(path, 'post', await r.call('/api/v1/receipts/gateway', undefined, { method: 'GET', key: null }))
    conforms(path, 'post', await post(JSON.stringify({ pad: 'x'.repeat(20_000) })))
    const documented = Object.keys(doc.paths[path].post.responses).filter((s) => s !== '500')
    expect(
      [...seen]
        .filter((s) => s.startsWith(`post ${path} `))
        .map((s) => s.split(' ')[2])
        .sort(),
    ).toEqual(documented.sort())
  } finally {
    r.close()
    void stub.stop(true)
  }
})

// Last: it closes the database under the server.
test('the 500 of verify matches the document', async () => {
  await closeDatabaseUnder(h.server)
  conforms('/api/v1/verify', 'post', await h.verify({ verification_id: 'x', code: '123456' }))
})
