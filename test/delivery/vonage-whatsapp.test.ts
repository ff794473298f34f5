/**
 * WhatsApp through Vonage's Messages API (docs/delivery.md#whatsapp-through-vonage),
 * through a local stub: the exact request (the application's RS256 JWT, the
 * `custom` template message in the language nearest the send), the errors
 * mapped, and the status webhooks, signed as Vonage signs them (an HS256 JWT
 * under the signature secret in `Authorization`, its `payload_hash` the
 * SHA-256 of the body), built here with node:crypto independently of src/.
 */
import { describe, expect, test } from 'bun:test'
import { createHash, createHmac, createPublicKey, createVerify } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { resolveConfig } from '../../src/app/load-config.ts'
import { ConfigError } from '../../src/config/load.ts'
import { closeAfterTest } from '../kit/cleanup.ts'
import { harnessPerTest, type Harness } from '../kit/harness.ts'
import { startVendorStub, type VendorStub } from '../kit/vendor-stub.ts'
import { eventBodies } from '../kit/whatsapp.ts'

const KEY_FILE = join(import.meta.dir, '..', 'kit', 'fixtures', 'tls', 'vonage-app.key')
const PUBLIC_KEY = createPublicKey(readFileSync(join(import.meta.dir, '..', 'kit', 'fixtures', 'tls', 'vonage-app.pub')))
const APP_ID = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee'
const SIG_SECRET = 'vonage-signature-secret-0123'
const PUBLIC = 'https://otp.example.com'
const UUID = 'aaaaaaaa-bbbb-cccc-dddd-0123456789ab'

const start = harnessPerTest()

const vonageTable = (url: string) => ({
  type: 'vonage',
  application_id: APP_ID,
  private_key_file: KEY_FILE,
  signature_secret_env: 'VONAGE_SIGNATURE_SECRET',
  whatsapp_from: '14157386102',
  whatsapp_template: 'otp_code',
  whatsapp_languages: ['en_US', 'es', 'pt_BR'],
  messages_base_url: url,
})

async function setup(answer: () => Response = () => Response.json({ message_uuid: UUID }, { status: 202 }), backup = false) {
  const stub = startVendorStub(answer)
  const second = startVendorStub(() => Response.json({ message_uuid: 'bbbbbbbb-bbbb-cccc-dddd-0123456789ab' }, { status: 202 }))
  closeAfterTest(stub)
  closeAfterTest(second)
  const h = await start({
    credits: 20,
    configuredDelivery: true,
    env: { VONAGE_SIGNATURE_SECRET: SIG_SECRET },
    config: {
      server: { public_url: PUBLIC },
      providers: backup ? { vonage_wa: vonageTable(stub.url), vonage_backup: vonageTable(second.url) } : { vonage_wa: vonageTable(stub.url) },
      channels: { whatsapp: backup ? ['vonage_wa', 'vonage_backup'] : ['vonage_wa'] },
      limits: { recipient_per_minute: 100, recipient_per_hour: 100 },
    },
  })
  return { h, stub, second }
}

describe('a send', () => {
  test.each([
    ['en', 'en_US'],
    ['es-MX', 'es'],
    ['pt-BR', 'pt_BR'],
  ])('locale %s: the exact request, template language %s', async (locale, language) => {
    const { h, stub } = await setup()
    const r = await h.send({ channel: 'whatsapp', recipient: '+5511987654321', locale, code: '482913' })
    expect(r.status).toBe(200)
    const req = stub.requests[0]! as VendorStub['requests'][number]
    expect(req.method).toBe('POST')
    expect(req.path).toBe('/v1/messages')
    expect(req.headers['content-type']).toBe('application/json')
    expect(req.body).toBe(
      JSON.stringify({
        message_type: 'custom',
        channel: 'whatsapp',
        to: '5511987654321',
        from: '14157386102',
        custom: {
          type: 'template',
          template: {
            name: 'otp_code',
            language: { policy: 'deterministic', code: language },
            components: [
              { type: 'body', parameters: [{ type: 'text', text: '482913' }] },
              { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '482913' }] },
            ],
          },
        },
        client_ref: r.json.verification_id,
      }),
    )
    const [head, claims, signature] = /^Bearer (.+)$/.exec(req.headers.authorization!)![1]!.split('.') as [string, string, string]
    expect(JSON.parse(Buffer.from(head, 'base64url').toString())).toEqual({ alg: 'RS256', typ: 'JWT' })
    expect(JSON.parse(Buffer.from(claims, 'base64url').toString())).toMatchObject({ application_id: APP_ID })
    expect(createVerify('RSA-SHA256').update(`${head}.${claims}`).verify(PUBLIC_KEY, Buffer.from(signature, 'base64url'))).toBe(true)
    await h.server.storage.settled()
    const s = await h.call(`/api/v1/verifications/${r.json.verification_id}`, undefined, { method: 'GET', headers: {} })
    expect(s.json.delivery).toMatchObject({ status: 'accepted', provider: 'vonage_wa', language })
  })

  test.each([[401], [403]])('%i (the JWT refused): misconfigured, naming application_id; the next provider takes it', async (httpStatus) => {
    const { h, second } = await setup(
      () => Response.json({ type: 'https://developer.vonage.com/api-errors#unauthorized', title: 'Unauthorized' }, { status: httpStatus }),
      true,
    )
    expect((await h.send({ channel: 'whatsapp', recipient: '+14155550123' })).status).toBe(200)
    expect(second.requests).toHaveLength(1)
    expect(h.logs.find((l) => l.includes('provider misconfigured: vonage_wa'))).toContain('"setting":"providers.vonage_wa.application_id"')
  })

  test('422 (the template refused): misconfigured, naming whatsapp_template', async () => {
    const { h } = await setup(() => Response.json({ type: 'https://developer.vonage.com/api-errors/messages#1150', title: 'Invalid params' }, { status: 422 }))
    expect((await h.send({ channel: 'whatsapp', recipient: '+14155550123' })).status).toBe(500)
    expect(h.logs.find((l) => l.includes('provider misconfigured: vonage_wa'))).toContain('(error 1150)')
  })

  test.each([[429], [500], [503]])('%i: the next provider takes it', async (httpStatus) => {
    const { h, second } = await setup(() => Response.json({ title: 'Rate Limit Hit' }, { status: httpStatus }), true)
    expect((await h.send({ channel: 'whatsapp', recipient: '+14155550123' })).status).toBe(200)
    expect(second.requests).toHaveLength(1)
  })
})

/** A Messages API status webhook's JWT: HS256 under the signature secret, `payload_hash` the hex SHA-256 of the body. */
function vonageJwt(body: string, secret = SIG_SECRET, hashOf = body): string {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
  const claims = {
    iat: 1767268800,
    jti: 'c5ba8f24-1a14-4c10-bfdf-3fbe8ce511b5',
    iss: 'Vonage',
    payload_hash: createHash('sha256').update(hashOf).digest('hex'),
    api_key: 'abcd1234',
    application_id: APP_ID,
  }
  const input = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}`
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`
}

async function webhook(h: Harness, body: string, headers: Record<string, string>) {
  const res = await h.server.http.handle(
    new Request('http://127.0.0.1:8080/api/v1/receipts/vonage_wa', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body }),
  )
  return res.status
}

/** A WhatsApp status callback as Vonage's documentation shows one. */
const status = (fields: Record<string, unknown>) =>
  JSON.stringify({ message_uuid: UUID, to: '5511987654321', from: '14157386102', timestamp: '2026-01-01T12:00:00.000Z', channel: 'whatsapp', ...fields })

describe('status webhooks', () => {
  test('read -> delivered (by message_uuid), once; signed wrong, re-serialized or unsigned: 403, nothing changes', async () => {
    const { h } = await setup()
    const r = await h.send({ channel: 'whatsapp', recipient: '+5511987654321' })
    await h.server.storage.settled()
    const body = status({ status: 'read' })
    expect(await webhook(h, body, { authorization: `Bearer ${vonageJwt(body, 'another-secret')}` })).toBe(403)
    expect(await webhook(h, body, {})).toBe(403)
    const spaced = JSON.stringify(JSON.parse(body), null, 1)
    expect(await webhook(h, spaced, { authorization: `Bearer ${vonageJwt(body)}` })).toBe(403) // payload_hash is the original's
    const [row0] = await h.sql('SELECT delivery FROM verifications WHERE id = $1', [r.json.verification_id])
    expect(row0!.delivery).toBe('accepted')
    expect(await webhook(h, body, { authorization: `Bearer ${vonageJwt(body)}` })).toBe(200)
    const delivered = status({ status: 'delivered' })
    expect(await webhook(h, delivered, { authorization: `Bearer ${vonageJwt(delivered)}` })).toBe(200)
    const [row] = await h.sql('SELECT delivery FROM verifications WHERE id = $1', [r.json.verification_id])
    expect(row!.delivery).toBe('delivered')
    expect(await eventBodies(h, 'verification.delivered')).toHaveLength(1)
  })

  test("rejected -> undelivered with Vonage's error code and title, found by client_ref", async () => {
    const { h } = await setup()
    const r = await h.send({ channel: 'whatsapp', recipient: '+5511987654321' })
    await h.server.storage.settled()
    const body = status({
      message_uuid: 'cccccccc-bbbb-cccc-dddd-0123456789ab',
      client_ref: r.json.verification_id,
      status: 'rejected',
      error: { type: 'https://developer.vonage.com/api-errors/messages#1340', title: 'Outside Allowed Window', detail: 'x', instance: 'y' },
    })
    expect(await webhook(h, body, { authorization: `Bearer ${vonageJwt(body)}` })).toBe(200)
    const s = await h.call(`/api/v1/verifications/${r.json.verification_id}`, undefined, { method: 'GET', headers: {} })
    expect(s.json.delivery).toMatchObject({ status: 'undelivered', error: { code: '1340', title: 'Outside Allowed Window' } })
  })
})

test('the config: for WhatsApp only, the application and the whatsapp_* keys are required, from is not', () => {
  const problemsOf = (table: Record<string, unknown>): string[] => {
    try {
      resolveConfig({ providers: { v: table }, channels: { whatsapp: ['v'] } }, 'test', {})
      return []
    } catch (err) {
      if (err instanceof ConfigError) return err.problems
      throw err
    }
  }
  expect(problemsOf({ type: 'vonage' })).toEqual([
    'providers.v.application_id is missing: this provider sends WhatsApp through the Messages API, which needs an application id',
    "providers.v.private_key_file is missing: this provider sends WhatsApp through the Messages API, which needs the application's private key file",
    'providers.v.whatsapp_from is missing: this provider sends WhatsApp: your WhatsApp Business number at Vonage, such as "14157386102"',
    'providers.v.whatsapp_template is missing: this provider sends WhatsApp: the name of the approved AUTHENTICATION template, such as "otp_code"',
    'providers.v.whatsapp_languages is missing: this provider sends WhatsApp: the template\'s approved language codes, the default first, such as ["en_US", "es"]',
  ])
  const { signature_secret_env: _s, ...table } = vonageTable('https://api.nexmo.com')
  expect(problemsOf(table)).toEqual([])
})
