/**
 * The other shapes Auth0, authentik, Keycloak and Kratos send through
 * POST /hooks/NAME (docs/integrations.md): a base64url secret, authentik's
 * token alone, Keycloak's form and message UUID, Kratos's email code, its
 * link emails and a `locale`; and the request log of each, which names the
 * hook and never the recipient, the code or the secret. Both engines.
 */
import { describe, expect, test } from 'bun:test'
import { SignJWT } from 'jose'
import { harnessPerTest, type Harness } from '../kit/harness.ts'
import { balance, hookCall, withHooks, written } from '../kit/hooks.ts'
import { AUTH0_SECRET, AUTHENTIK_TOKEN, auth0Request, authentikRequest, KEYCLOAK_TOKEN, KRATOS_TOKEN, keycloakRequest, kratosRequest } from './gateway-build.ts'
import { kratosOutput } from './kratos-jsonnet.ts'

const harness = harnessPerTest()
const PHONE = '+14155550123'
const JSON_TYPE = { 'content-type': 'application/json' }

const auth0 = { type: 'auth0', account: 'default', secret_env: 'AUTH0_GATEWAY_SECRET', audience: 'urn:otpd', subject: 'urn:Auth0' }
const authentik = { type: 'authentik', account: 'default', secret_env: 'AUTHENTIK_SMS_TOKEN' }
const keycloak = { type: 'keycloak', account: 'default', secret_env: 'KEYCLOAK_SMS_TOKEN' }
const kratos = { type: 'kratos', account: 'default', secret_env: 'KRATOS_COURIER_TOKEN' }

test('auth0 with secret_base64: the token is signed with the bytes the base64url secret holds', async () => {
  const key = new Uint8Array(Array.from({ length: 32 }, (_, i) => (i * 53 + 7) % 256))
  const h = await harness(withHooks({ a0: { ...auth0, secret_base64: true } }, { AUTH0_GATEWAY_SECRET: Buffer.from(key).toString('base64url') }))
  const jwt = await new SignJWT({}).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setSubject('urn:Auth0').setAudience('urn:otpd').sign(key)
  const raw = JSON.stringify({ recipient: PHONE, body: 'Your verification code is: 482913', sender: '+15550001111' })
  expect((await hookCall(h, 'a0', raw, { ...JSON_TYPE, authorization: `Bearer ${jwt}` })).status).toBe(200)
  expect(h.delivery.sent[0]).toMatchObject({ recipient: PHONE, text: 'Your verification code is: 482913' })
})

test("authentik's token alone (Body, no Message): otpd's catalogue text with the account's autofill line", async () => {
  const h = await harness(withHooks({ ak: authentik }, { AUTHENTIK_SMS_TOKEN: AUTHENTIK_TOKEN }, { config: { messages: { otp_domain: 'example.com' } } }))
  const raw = `{"From": "+15550001111", "To": "${PHONE}", "Body": "482913"}`
  expect((await hookCall(h, 'ak', raw, { ...JSON_TYPE, authorization: `Bearer ${AUTHENTIK_TOKEN}` })).status).toBe(200)
  expect(h.delivery.sent[0]).toMatchObject({ recipient: PHONE, code: '482913', text: 'Your verification code is: 482913\n\n@example.com #482913' })
})

describe('keycloak', () => {
  test('"URL encode data": the form as the plugin writes it delivers the same text', async () => {
    const h = await harness(withHooks({ kc: keycloak }, { KEYCLOAK_SMS_TOKEN: KEYCLOAK_TOKEN }))
    const raw = '=changeme&text=Your+SMS+code+is+482913+and+is+valid+for+5+minutes.&to=%2B14155550123&from=Keycloak'
    const r = await hookCall(h, 'kc', raw, { 'content-type': 'application/x-www-form-urlencoded', authorization: KEYCLOAK_TOKEN })
    expect(r.status).toBe(200)
    expect(h.delivery.sent[0]).toMatchObject({ recipient: PHONE, text: 'Your SMS code is 482913 and is valid for 5 minutes.' })
  })

  test('with "Use message UUID", a request again with the same UUID is delivered and charged once', async () => {
    const h = await harness(withHooks({ kc: { ...keycloak, uuid_attribute: 'id' } }, { KEYCLOAK_SMS_TOKEN: KEYCLOAK_TOKEN }))
    const body = (code: string) =>
      `{"id":"5d0b8f0e-3f43-4b8e-9f7c-0d1c2b3a4e5f","text":"Your SMS code is ${code} and is valid for 5 minutes.","to":"${PHONE}","from":"Keycloak"}`
    const headers = { ...JSON_TYPE, authorization: KEYCLOAK_TOKEN }
    expect((await hookCall(h, 'kc', body('482913'), headers)).status).toBe(200)
    expect((await hookCall(h, 'kc', body('482913'), headers)).status).toBe(200)
    expect(h.delivery.sent).toHaveLength(1)
    expect(await balance(h)).toBe(9)
  })
})

describe('kratos', () => {
  const start = () => harness(withHooks({ kratos }, { KRATOS_COURIER_TOKEN: KRATOS_TOKEN }))
  const call = (h: Harness, raw: string) => hookCall(h, 'kratos', raw, { ...JSON_TYPE, authorization: KRATOS_TOKEN })

  test("an email verification code: otpd's email with the code, checked by the hook", async () => {
    const h = await start()
    expect((await call(h, kratosOutput('email-verification-code'))).status).toBe(200)
    expect(h.delivery.sent[0]).toMatchObject({ channel: 'email', recipient: 'ada@example.com', code: '215588', subject: 'Your Verification Code' })
    expect(h.delivery.sent[0]!.text).toContain('215588')
    expect((await written(h)).verifications[0]).toMatchObject({ channel: 'email', checked_by: 'kratos' })
  })

  test("an SMS recovery code, kept by Kratos under verification_code, in otpd's text", async () => {
    const h = await start()
    expect((await call(h, kratosOutput('sms-recovery-code'))).status).toBe(200)
    expect(h.delivery.sent[0]).toMatchObject({ channel: 'sms', recipient: '+4915112345678', text: 'Your verification code is: 730164' })
  })

  test("a notice without a code: Kratos's text as given", async () => {
    const h = await start()
    expect((await call(h, kratosOutput('sms-address-changed'))).status).toBe(200)
    expect(h.delivery.sent[0]!.text).toBe("An address on your account was changed. If this wasn't you, contact support.\n")
  })

  test('a `locale` the Jsonnet adds picks the catalogue language', async () => {
    const h = await start()
    const raw = kratosRequest(PHONE, '482913').raw.replace('"message_type"', '"locale": "de",\n   "message_type"')
    expect((await call(h, raw)).status).toBe(200)
    expect(h.delivery.sent[0]!.text).toBe('482913 ist Ihr Bestätigungscode')
  })
})

describe('the request log names the hook, never the recipient, the code or the secret', () => {
  const cases: [string, Record<string, unknown>, Record<string, string>, string, (h: Harness) => Promise<{ raw: string; headers: Record<string, string> }>][] =
    [
      ['auth0', auth0, { AUTH0_GATEWAY_SECRET: AUTH0_SECRET }, AUTH0_SECRET, (h) => auth0Request(PHONE, 'Your verification code is: 482913', h.clock.now())],
      ['authentik', authentik, { AUTHENTIK_SMS_TOKEN: AUTHENTIK_TOKEN }, AUTHENTIK_TOKEN, async () => authentikRequest(PHONE, '482913')],
      ['keycloak', keycloak, { KEYCLOAK_SMS_TOKEN: KEYCLOAK_TOKEN }, KEYCLOAK_TOKEN.slice(7), async () => keycloakRequest(PHONE, 'Your SMS code is 482913.')],
      ['kratos', kratos, { KRATOS_COURIER_TOKEN: KRATOS_TOKEN }, KRATOS_TOKEN.slice(7), async () => kratosRequest(PHONE, '482913')],
    ]
  for (const [name, hook, env, secret, build] of cases) {
    test(name, async () => {
      const h = await harness(withHooks({ [name]: hook }, env))
      const req = await build(h)
      expect((await hookCall(h, name, req.raw, req.headers)).status).toBe(200)
      const line = h.logs.find((l) => l.includes('"route":"/hooks/:name"'))!
      expect(JSON.parse(line)).toMatchObject({ hook: name, status: 200, outcome: 'sent', channel: 'sms' })
      for (const l of h.logs) {
        expect(l).not.toContain('4155550123')
        expect(l).not.toContain('482913')
        expect(l).not.toContain(secret)
      }
    })
  }
})
