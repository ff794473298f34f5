/**
 * Logto's HTTP SMS and HTTP email connectors (docs/integrations.md#logto),
 * with requests as connector-http-sms / connector-http-email post them
 * (`{ to, type, payload, ip }`, the configured `authorization` as the
 * Authorization header): delivery in the payload's language, the charge,
 * the events, each refusal as the status and body Logto passes on,
 * authentication failures (401, nothing written) and a retry delivered once.
 * Both engines (OTPD_TEST_DATABASE).
 */
import { describe, expect, test } from 'bun:test'
import { eventTypes } from '../kit/events.ts'
import { harnessPerTest, type Harness, type HarnessOptions } from '../kit/harness.ts'
import { balance, hookCall, withHooks, written } from '../kit/hooks.ts'

const harness = harnessPerTest()
/** The connector's `authorization` setting, sent verbatim. */
const AUTHORIZATION = 'Bearer 6b1f0f5cfa2e4e1e9d8d3f0a4c2b7e91'

function start(hook: Record<string, unknown> = {}, opts: HarnessOptions = {}): Promise<Harness> {
  return harness(
    withHooks(
      { logto: { type: 'logto', account: 'default', secret_env: 'LOGTO_HOOK_AUTHORIZATION', ...hook } },
      { LOGTO_HOOK_AUTHORIZATION: AUTHORIZATION },
      opts,
    ),
  )
}

/** got's `json:` body: JSON.stringify of `{ to, type, payload, ...(ip && { ip }) }`. */
function body(to: string, type: string, payload: Record<string, unknown>, ip?: string): string {
  return JSON.stringify({ to, type, payload, ...(ip && { ip }) })
}

const post = (h: Harness, raw: string, authorization: string | null = AUTHORIZATION) =>
  hookCall(h, 'logto', raw, { 'content-type': 'application/json', ...(authorization === null ? {} : { authorization }) })

describe('logto: HTTP SMS connector', () => {
  test("delivers payload.code to `to` (digits, as Logto keeps a number) in otpd's text, charges one credit", async () => {
    const h = await start()
    const r = await post(h, body('14155550123', 'SignIn', { code: '482913', locale: 'en', uiLocales: 'en' }, '203.0.113.7'))
    expect(r.status).toBe(200)
    expect(h.delivery.sent).toEqual([expect.objectContaining({ channel: 'sms', recipient: '+14155550123', text: 'Your verification code is: 482913' })])
    expect(await balance(h)).toBe(9)
    expect((await written(h)).verifications).toEqual([expect.objectContaining({ checked_by: 'logto', channel: 'sms' })])
    expect(await eventTypes(h)).toEqual(['verification.sent'])
  })

  test("the payload's locale chooses the language", async () => {
    const h = await start()
    expect((await post(h, body('14155550123', 'Register', { code: '482913', locale: 'es' }))).status).toBe(200)
    expect(h.delivery.sent[0]).toMatchObject({ locale: 'es', text: '482913 es tu clave de acceso' })
  })

  test('a locale otpd has no texts for falls back to the account language', async () => {
    const h = await start()
    expect((await post(h, body('14155550123', 'SignIn', { code: '482913', locale: 'tlh' }))).status).toBe(200)
    expect(h.delivery.sent[0]).toMatchObject({ locale: 'en' })
  })

  test('the same request again (a retry) delivers and charges once', async () => {
    const h = await start()
    const raw = body('14155550123', 'SignIn', { code: '482913', locale: 'en' })
    expect((await post(h, raw)).status).toBe(200)
    expect((await post(h, raw)).status).toBe(200)
    expect(h.delivery.sent).toHaveLength(1)
    expect(await balance(h)).toBe(9)
  })
})

describe('logto: HTTP email connector', () => {
  test('delivers payload.code to the address, with payload.link under it', async () => {
    const h = await start()
    const raw = body('ann@example.com', 'SignIn', { code: '482913', link: 'https://auth.example.com/magic?token=abc', locale: 'en' })
    expect((await post(h, raw)).status).toBe(200)
    expect(h.delivery.sent[0]).toMatchObject({
      channel: 'email',
      recipient: 'ann@example.com',
      text: 'Your verification code is: 482913\n\nhttps://auth.example.com/magic?token=abc',
    })
  })
})

describe('logto: authentication (401, nothing written or sent)', () => {
  const cases: [string, string | null][] = [
    ['no Authorization', null],
    ['another value', 'Bearer 00000000000000000000000000000000'],
    ['the value without its scheme', AUTHORIZATION.slice('Bearer '.length)],
  ]
  for (const [name, authorization] of cases) {
    test(name, async () => {
      const h = await start()
      const r = await post(h, body('14155550123', 'SignIn', { code: '482913' }), authorization)
      expect(r.status).toBe(401)
      expect(r.text).toBe('Hook request not authenticated')
      expect(await written(h)).toEqual({ verifications: [], debits: 0, hookKeys: 0, keyHits: 0 })
    })
  }
})

describe('logto: refusals as the status and plain-text body Logto passes on', () => {
  test('no credits: 402', async () => {
    const h = await start({}, { credits: 0 })
    const r = await post(h, body('14155550123', 'SignIn', { code: '482913' }))
    expect(r.status).toBe(402)
    expect(r.headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(r.text).toBe('Insufficient credits. Please purchase more credits.')
  })

  test('the recipient limit: 429 with Retry-After', async () => {
    const h = await start({}, { config: { limits: { recipient_per_minute: 1 } } })
    expect((await post(h, body('14155550123', 'SignIn', { code: '482913' }))).status).toBe(200)
    const r = await post(h, body('14155550123', 'SignIn', { code: '111111' }))
    expect(r.status).toBe(429)
    expect(r.headers.get('retry-after')).toBe('60')
    expect(r.text).toBe('Rate limit exceeded: Maximum 1 verification codes per minute. Please try again in 60 seconds.')
  })

  test('a link without a code (an invitation): 400', async () => {
    const h = await start()
    const r = await post(h, body('ann@example.com', 'OrganizationInvitation', { link: 'https://auth.example.com/invite' }))
    expect(r.status).toBe(400)
    expect(r.text).toBe('Hook payload not understood')
  })
})
