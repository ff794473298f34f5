/**
 * Zitadel's HTTP SMS and email providers (docs/integrations.md#zitadel), with
 * requests built and signed as Zitadel builds them (zitadel-build.ts):
 * delivery with otpd's text, the charge, the events, each refusal as the
 * status Zitadel reads, signature failures (401, nothing written) and a
 * retry delivered once. Both engines (OTPD_TEST_DATABASE).
 */
import { describe, expect, test } from 'bun:test'
import { eventTypes } from '../kit/events.ts'
import { harnessPerTest, MINUTE, type Harness, type HarnessOptions } from '../kit/harness.ts'
import { balance, hookCall, withHooks, written } from '../kit/hooks.ts'
import { zitadelEmail, zitadelHeaders, zitadelSignature, zitadelSms } from './zitadel-build.ts'

const harness = harnessPerTest()
/** What Zitadel's AddSMSProviderHTTP answers as `signingKey`. */
const KEY = 'n3v1Zx8qPq0aK7uXh2YbT5cW9rLmE4sJ'

function start(hook: Record<string, unknown> = {}, opts: HarnessOptions = {}): Promise<Harness> {
  return harness(
    withHooks({ zitadel: { type: 'zitadel', account: 'default', secret_env: 'ZITADEL_SIGNING_KEY', ...hook } }, { ZITADEL_SIGNING_KEY: KEY }, opts),
  )
}

const send = (h: Harness, payload: string, at = h.clock.now(), key = KEY) => hookCall(h, 'zitadel', payload, zitadelHeaders(payload, key, at))

describe('zitadel: HTTP SMS provider', () => {
  test("delivers the code of the message's arguments in otpd's text, charges one credit, answers 200", async () => {
    const h = await start()
    const r = await send(h, zitadelSms('+41791234567', '739184'))
    expect(r.status).toBe(200)
    expect(h.delivery.sent).toEqual([expect.objectContaining({ channel: 'sms', recipient: '+41791234567', text: 'Your verification code is: 739184' })])
    expect(await balance(h)).toBe(9)
    expect((await written(h)).verifications).toEqual([expect.objectContaining({ checked_by: 'zitadel', channel: 'sms' })])
    expect(await eventTypes(h)).toEqual(['verification.sent'])
  })

  test('a phone verification code of letters and digits is delivered as it is', async () => {
    const h = await start()
    expect((await send(h, zitadelSms('+41791234567', 'K7Q2XH'))).status).toBe(200)
    expect(h.delivery.sent[0]!.code).toBe('K7Q2XH')
  })

  test("Zitadel's worker trying the same message again delivers and charges once", async () => {
    const h = await start()
    const payload = zitadelSms('+41791234567', '739184')
    expect((await send(h, payload)).status).toBe(200)
    h.clock.advance(MINUTE)
    expect((await send(h, payload)).status).toBe(200)
    expect(h.delivery.sent).toHaveLength(1)
    expect(await balance(h)).toBe(9)
  })

  test('once the code has lived its lifetime, the same code is a new delivery', async () => {
    const h = await start({ code_lifetime_seconds: 60 })
    const payload = zitadelSms('+41791234567', '739184')
    expect((await send(h, payload)).status).toBe(200)
    h.clock.advance(61_000)
    expect((await send(h, payload)).status).toBe(200)
    expect(h.delivery.sent).toHaveLength(2)
  })
})

describe('zitadel: HTTP email provider', () => {
  test('the email carries the code and the verification link of templateData.URL', async () => {
    const h = await start()
    const url = 'https://auth.example.com/ui/login/mail/verification?userID=312909075212468632&code=QX7K2M&orgID=312909075211944344'
    expect((await send(h, zitadelEmail('ann@example.com', 'QX7K2M', url))).status).toBe(200)
    expect(h.delivery.sent[0]).toMatchObject({
      channel: 'email',
      recipient: 'ann@example.com',
      code: 'QX7K2M',
      text: `Your verification code is: QX7K2M\n\n${url}`,
    })
  })
})

describe('zitadel: signatures (401, nothing written or sent)', () => {
  const cases: [string, (h: Harness, p: string) => Record<string, string>][] = [
    ['no ZITADEL-Signature', () => ({ 'content-type': 'application/json' })],
    ['signed with another key', (h, p) => zitadelHeaders(p, 'another-signing-key-0123456789abcd', h.clock.now())],
    ['signed more than 300 s ago', (h, p) => zitadelHeaders(p, KEY, h.clock.now() - 301_000)],
    ['signed more than 300 s ahead', (h, p) => zitadelHeaders(p, KEY, h.clock.now() + 301_000)],
    ['a header without t=', (h, p) => ({ 'Zitadel-Signature': zitadelSignature(p, KEY, h.clock.now()).split(',')[1]! })],
    ['a malformed pair', (h, p) => ({ 'Zitadel-Signature': `${zitadelSignature(p, KEY, h.clock.now())},v1` })],
    ['a signature of another body', (h, p) => zitadelHeaders(p.replace('739184', '000000'), KEY, h.clock.now())],
  ]
  for (const [name, headersOf] of cases) {
    test(name, async () => {
      const h = await start()
      const payload = zitadelSms('+41791234567', '739184')
      const r = await hookCall(h, 'zitadel', payload, headersOf(h, payload))
      expect(r.status).toBe(401)
      expect(r.json).toEqual({ error: 'Hook request not authenticated' })
      expect(h.delivery.sent).toHaveLength(0)
      expect(await written(h)).toEqual({ verifications: [], debits: 0, hookKeys: 0, keyHits: 0 })
    })
  }

  test('several v1 signatures: one matching is enough (a key being rotated)', async () => {
    const h = await start()
    const payload = zitadelSms('+41791234567', '739184')
    const header = zitadelSignature(payload, KEY, h.clock.now())
    const other = zitadelSignature(payload, 'old-signing-key-0123456789abcdefgh', h.clock.now()).split(',')[1]
    expect((await hookCall(h, 'zitadel', payload, { 'Zitadel-Signature': `${header},${other}` })).status).toBe(200)
  })
})

describe('zitadel: refusals as the status Zitadel reads (its worker retries a failure)', () => {
  test('no credits: 402', async () => {
    const h = await start({}, { credits: 0 })
    const r = await send(h, zitadelSms('+41791234567', '739184'))
    expect(r.status).toBe(402)
    expect(r.json).toEqual({ error: 'Insufficient credits. Please purchase more credits.' })
  })

  test("the hook's request limit: 429 with Retry-After", async () => {
    const h = await start({ requests_per_minute: 1 })
    expect((await send(h, zitadelSms('+41791234567', '739184'))).status).toBe(200)
    const r = await send(h, zitadelSms('+41791234568', '111111'))
    expect(r.status).toBe(429)
    expect(r.headers.get('retry-after')).toBe('60')
    expect(r.json.error).toBe('Rate limit exceeded: Maximum 1 requests per minute. Please try again in 60 seconds.')
  })

  test('a country not allowed: 403', async () => {
    const h = await start({}, { config: { fraud: { mode: 'enforce', allowed_countries: ['US'] } } })
    const r = await send(h, zitadelSms('+41791234567', '739184'))
    expect(r.status).toBe(403)
    expect(r.json.error).toBe('Sending to this destination country is not allowed: CH')
  })

  test('a message that is no Zitadel notification: 400', async () => {
    const h = await start()
    const r = await send(h, JSON.stringify({ text: 'hello' }))
    expect(r.status).toBe(400)
    expect(r.json).toEqual({ error: 'Hook payload not understood' })
  })
})
