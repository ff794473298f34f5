/**
 * Auth0, authentik, Keycloak and Kratos through POST /hooks/NAME
 * (docs/integrations.md), with each request built as that server builds it
 * (gateway-build.ts): delivery through the provider stub with the expected
 * text (the whole text as given; Kratos's code in otpd's catalogue text), the
 * charge and the event, each refusal in the answer that server reads, an
 * authentication failure (401, nothing written or sent) and a retry delivered
 * once. Both engines (OTPD_TEST_DATABASE).
 */
import { describe, expect, test } from 'bun:test'
import { eventTypes } from '../kit/events.ts'
import { harnessPerTest, type Harness, type HarnessOptions } from '../kit/harness.ts'
import { balance, hookCall, withHooks, written } from '../kit/hooks.ts'
import {
  AUTH0_SECRET,
  AUTHENTIK_TOKEN,
  auth0Request,
  authentikRequest,
  type GatewayRequest,
  KEYCLOAK_TOKEN,
  KRATOS_TOKEN,
  keycloakRequest,
  kratosRequest,
} from './gateway-build.ts'

const harness = harnessPerTest()
const PHONE = '+14155550123'
const OTHER = '+14155550124'

interface GatewayType {
  type: string
  hook: Record<string, unknown>
  env: Record<string, string>
  /** The server's request delivering `code` to `to`. */
  request(h: Harness, to: string, code: string): Promise<GatewayRequest>
  /** The same, with a credential the hook does not hold. */
  forged(h: Harness, to: string, code: string): Promise<GatewayRequest>
  /** The text the provider is handed. */
  text(code: string): string
  /** The answer's body for a refusal with this message. */
  refusal(kind: string, message: string): { json?: Record<string, unknown>; text?: string }
}

const plain = (_kind: string, message: string) => ({ text: message })

const TYPES: GatewayType[] = [
  {
    type: 'auth0',
    hook: { type: 'auth0', account: 'default', secret_env: 'AUTH0_GATEWAY_SECRET', audience: 'urn:otpd', subject: 'urn:Auth0' },
    env: { AUTH0_GATEWAY_SECRET: AUTH0_SECRET },
    request: (h, to, code) => auth0Request(to, `Your verification code is: ${code}`, h.clock.now()),
    forged: (h, to, code) => auth0Request(to, `Your verification code is: ${code}`, h.clock.now(), 'another-secret'),
    text: (code) => `Your verification code is: ${code}`,
    refusal: (kind, message) => ({ json: { error: kind, error_description: message } }),
  },
  {
    type: 'authentik',
    hook: { type: 'authentik', account: 'default', secret_env: 'AUTHENTIK_SMS_TOKEN', auth: 'bearer' },
    env: { AUTHENTIK_SMS_TOKEN: AUTHENTIK_TOKEN },
    request: async (_h, to, code) => authentikRequest(to, code),
    forged: async (_h, to, code) => authentikRequest(to, code, 'Bearer ak-guess'),
    text: (code) => `Use this code to authenticate in authentik: ${code}`,
    refusal: plain,
  },
  {
    type: 'keycloak',
    hook: { type: 'keycloak', account: 'default', secret_env: 'KEYCLOAK_SMS_TOKEN' },
    env: { KEYCLOAK_SMS_TOKEN: KEYCLOAK_TOKEN },
    request: async (_h, to, code) => keycloakRequest(to, `Your SMS code is ${code} and is valid for 5 minutes.`),
    forged: async (_h, to, code) => keycloakRequest(to, `Your SMS code is ${code} and is valid for 5 minutes.`, 'Bearer kc-guess'),
    text: (code) => `Your SMS code is ${code} and is valid for 5 minutes.`,
    refusal: plain,
  },
  {
    type: 'kratos',
    hook: { type: 'kratos', account: 'default', secret_env: 'KRATOS_COURIER_TOKEN' },
    env: { KRATOS_COURIER_TOKEN: KRATOS_TOKEN },
    request: async (_h, to, code) => kratosRequest(to, code),
    forged: async (_h, to, code) => kratosRequest(to, code, 'Bearer kratos-guess'),
    text: (code) => `Your verification code is: ${code}`,
    refusal: plain,
  },
]

for (const g of TYPES) {
  const start = (hook: Record<string, unknown> = {}, opts: HarnessOptions = {}) => harness(withHooks({ [g.type]: { ...g.hook, ...hook } }, g.env, opts))
  const call = async (h: Harness, to = PHONE, code = '482913') => {
    const r = await g.request(h, to, code)
    return hookCall(h, g.type, r.raw, r.headers)
  }
  const expectRefusal = (r: Awaited<ReturnType<typeof call>>, status: number, kind: string, message: string) => {
    expect(r.status).toBe(status)
    const body = g.refusal(kind, message)
    if (body.json) expect(r.json).toEqual(body.json)
    else expect(r.text).toBe(body.text!)
  }

  describe(`${g.type}: delivery`, () => {
    test('delivers the text, charges one credit, records the verification as checked by the hook', async () => {
      const h = await start()
      const r = await call(h)
      expect(r.status).toBe(200)
      expect(h.delivery.sent).toHaveLength(1)
      expect(h.delivery.sent[0]).toMatchObject({ channel: 'sms', recipient: PHONE, text: g.text('482913') })
      expect(await balance(h)).toBe(9)
      const w = await written(h)
      expect(w.verifications).toEqual([expect.objectContaining({ channel: 'sms', checked_by: g.type, recipient_mask: '+1415****123' })])
      expect(r.json).toEqual({ id: w.verifications[0]!.id })
      expect(await eventTypes(h)).toEqual(['verification.sent'])
    })

    test('a retry of the same request is answered 200 and neither delivered nor charged again', async () => {
      const h = await start()
      expect((await call(h)).status).toBe(200)
      expect((await call(h)).status).toBe(200)
      expect(h.delivery.sent).toHaveLength(1)
      expect(await balance(h)).toBe(9)
      expect((await written(h)).verifications).toHaveLength(1)
    })
  })

  describe(`${g.type}: authentication (401, nothing written or sent)`, () => {
    test('a credential the hook does not hold', async () => {
      const h = await start()
      const f = await g.forged(h, PHONE, '482913')
      const r = await hookCall(h, g.type, f.raw, f.headers)
      expectRefusal(r, 401, 'unauthenticated', 'Hook request not authenticated')
      expect(h.delivery.sent).toHaveLength(0)
      expect(await written(h)).toEqual({ verifications: [], debits: 0, hookKeys: 0, keyHits: 0 })
    })

    test('no credential at all', async () => {
      const h = await start()
      const f = await g.request(h, PHONE, '482913')
      const r = await hookCall(h, g.type, f.raw, { 'content-type': 'application/json' })
      expect(r.status).toBe(401)
      expect(h.delivery.sent).toHaveLength(0)
      expect(await written(h)).toEqual({ verifications: [], debits: 0, hookKeys: 0, keyHits: 0 })
    })
  })

  describe(`${g.type}: refusals`, () => {
    test('no credits: 402', async () => {
      const h = await start({}, { credits: 0 })
      expectRefusal(await call(h), 402, 'no_credits', 'Insufficient credits. Please purchase more credits.')
      expect(h.delivery.sent).toHaveLength(0)
    })

    test("the hook's request limit: 429 with Retry-After", async () => {
      const h = await start({ requests_per_minute: 1 })
      expect((await call(h)).status).toBe(200)
      const r = await call(h, OTHER, '111111')
      expectRefusal(r, 429, 'rate_limited', 'Rate limit exceeded: Maximum 1 requests per minute. Please try again in 60 seconds.')
      expect(r.headers.get('retry-after')).toBe('60')
      expect(await balance(h)).toBe(9)
    })

    test("the recipient's window: 429", async () => {
      const h = await start({}, { config: { limits: { recipient_per_minute: 1 } } })
      expect((await call(h)).status).toBe(200)
      expectRefusal(
        await call(h, PHONE, '222222'),
        429,
        'rate_limited',
        'Rate limit exceeded: Maximum 1 verification codes per minute. Please try again in 60 seconds.',
      )
      expect(h.delivery.sent).toHaveLength(1)
    })

    test('a country the fraud guard does not allow: 403', async () => {
      const h = await start({}, { config: { fraud: { mode: 'enforce', allowed_countries: ['GB'] } } })
      expectRefusal(await call(h), 403, 'blocked', 'Sending to this destination country is not allowed: US')
      expect(await eventTypes(h)).toEqual(['send.blocked'])
    })

    test('no provider took it: 503, the credit refunded', async () => {
      const h = await start()
      h.delivery.fail = true
      expectRefusal(await call(h), 503, 'unavailable', 'Failed to send verification')
      expect(await balance(h)).toBe(10)
    })
  })
}

describe('whole texts within messages.sms_max_segments', () => {
  const long = `Your verification code is: 482913. ${'This sentence makes the message longer than one segment. '.repeat(3)}`
  const cases: [string, GatewayType, (h: Harness) => Promise<GatewayRequest>][] = [
    ['auth0', TYPES[0]!, (h) => auth0Request(PHONE, long, h.clock.now())],
    [
      'authentik',
      TYPES[1]!,
      async () => ({ ...authentikRequest(PHONE, '482913'), raw: `{"From": "x", "To": "${PHONE}", "Body": "482913", "Message": "${long}"}` }),
    ],
    ['keycloak', TYPES[2]!, async () => keycloakRequest(PHONE, long)],
  ]
  for (const [name, g, build] of cases) {
    test(`${name}: a text over the cap is refused (400), nothing sent or charged`, async () => {
      const h = await harness(withHooks({ [name]: g.hook }, g.env, { config: { messages: { sms_max_segments: 1 } } }))
      const req = await build(h)
      const r = await hookCall(h, name, req.raw, req.headers)
      expect(r.status).toBe(400)
      expect(r.text).toContain('message is longer than 1 SMS segments')
      expect(h.delivery.sent).toHaveLength(0)
      expect(await balance(h)).toBe(10)
    })
  }
})

describe('kratos: messages without a code', () => {
  test("a recovery link email is delivered with Kratos's subject and text", async () => {
    const { kratosOutput } = await import('./kratos-jsonnet.ts')
    const g = TYPES[3]!
    const h = await harness(withHooks({ kratos: g.hook }, g.env))
    const r = await hookCall(h, 'kratos', kratosOutput('email-recovery-link'), { 'content-type': 'application/json', authorization: KRATOS_TOKEN })
    expect(r.status).toBe(200)
    expect(h.delivery.sent[0]).toMatchObject({ channel: 'email', recipient: 'ada@example.com', subject: 'Recover access to your account' })
    expect(h.delivery.sent[0]!.text).toContain('https://auth.example.com/self-service/recovery?token=Xy7&flow=8d2e')
  })
})
