/**
 * Supabase Auth's Send SMS and Send Email hooks (docs/integrations.md#supabase),
 * with requests built and signed as Supabase builds them (supabase-build.ts):
 * delivery with otpd's text, the charge, the events, each refusal in
 * Supabase's error object, signature failures (401, nothing written) and
 * retries delivered once. Both engines (OTPD_TEST_DATABASE).
 */
import { describe, expect, test } from 'bun:test'
import { eventTypes } from '../kit/events.ts'
import { harnessPerTest, MINUTE, type Harness, type HarnessOptions } from '../kit/harness.ts'
import { balance, hookCall, withHooks, written } from '../kit/hooks.ts'
import { sendEmailInput, sendSmsInput, signedHeaders, supabaseSecret } from './supabase-build.ts'

const harness = harnessPerTest()
const SECRET = supabaseSecret()
const HOOK = { supa: { type: 'supabase', account: 'default', secret_env: 'SUPABASE_HOOK_SECRET' } }

function start(hook: Record<string, unknown> = {}, opts: HarnessOptions = {}): Promise<Harness> {
  return harness(withHooks({ supa: { ...HOOK.supa, ...hook } }, { SUPABASE_HOOK_SECRET: SECRET }, opts))
}

/** One attempt of Supabase's dispatcher: the payload signed now, with a new webhook-id. */
function attempt(h: Harness, payload: string, secret = SECRET, at = h.clock.now()) {
  return hookCall(h, 'supa', payload, signedHeaders([secret], payload, at))
}

const PHONE = '14155550123'

describe('supabase: Send SMS hook', () => {
  test("delivers Supabase's code in otpd's text, charges one credit and answers {} as JSON", async () => {
    const h = await start()
    const r = await attempt(h, sendSmsInput(PHONE, '613049', h.clock.now()))
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('application/json')
    expect(r.text).toBe('{}')
    expect(h.delivery.sent).toHaveLength(1)
    expect(h.delivery.sent[0]).toMatchObject({ channel: 'sms', recipient: '+14155550123', text: 'Your verification code is: 613049', code: '613049' })
    expect(await balance(h)).toBe(9)
    const w = await written(h)
    expect(w.verifications).toEqual([expect.objectContaining({ channel: 'sms', checked_by: 'supa', recipient_mask: '+1415****123', delivery: 'accepted' })])
    expect(w.hookKeys).toBe(1)
    expect(await eventTypes(h)).toEqual(['verification.sent'])
    const [event] = await h.sql("SELECT body FROM events WHERE type = 'verification.sent'")
    expect(JSON.parse(String(event!.body)).data).toMatchObject({ checked_by: 'supa', recipient: '+1415****123', channel: 'sms' })
  })

  test("the account's autofill line follows the code (otp_domain)", async () => {
    const h = await start({}, { config: { messages: { otp_domain: 'example.com' } } })
    expect((await attempt(h, sendSmsInput(PHONE, '613049', h.clock.now()))).status).toBe(200)
    expect(h.delivery.sent[0]!.text).toBe('Your verification code is: 613049\n\n@example.com #613049')
  })

  test("Supabase's retries (same input, new webhook-id) and a replayed request deliver and charge once", async () => {
    const h = await start()
    const payload = sendSmsInput(PHONE, '613049', h.clock.now())
    const headers = signedHeaders([SECRET], payload, h.clock.now())
    expect((await hookCall(h, 'supa', payload, headers)).status).toBe(200)
    const retry = await attempt(h, payload)
    expect(retry.status).toBe(200)
    expect(retry.text).toBe('{}')
    const replay = await hookCall(h, 'supa', payload, headers)
    expect(replay.text).toBe('{}')
    expect(h.delivery.sent).toHaveLength(1)
    expect(await balance(h)).toBe(9)
    expect((await written(h)).verifications).toHaveLength(1)
  })

  test('the same code to the same number in a new input (a new metadata.uuid) is a new delivery', async () => {
    const h = await start()
    expect((await attempt(h, sendSmsInput(PHONE, '613049', h.clock.now()))).status).toBe(200)
    h.clock.advance(MINUTE)
    expect((await attempt(h, sendSmsInput(PHONE, '613049', h.clock.now()))).status).toBe(200)
    expect(h.delivery.sent).toHaveLength(2)
  })

  test('a code is never verified in otpd, and never reported expired', async () => {
    const h = await start()
    expect((await attempt(h, sendSmsInput(PHONE, '613049', h.clock.now()))).status).toBe(200)
    const [v] = (await written(h)).verifications
    const r = await h.verify({ verification_id: v!.id, code: '613049' })
    expect(r.status).toBe(404)
    h.clock.advance(60 * MINUTE)
    const { reportExpired } = await import('../../src/otp/events.ts')
    expect(await reportExpired(h.server.storage, h.clock)).toBe(0)
    h.clock.advance(MINUTE)
    expect(await reportExpired(h.server.storage, h.clock)).toBe(0)
    expect(await eventTypes(h)).toEqual(['verification.sent'])
  })
})

describe('supabase: Send Email hook', () => {
  test('the email carries the code and the confirmation link as Supabase builds it', async () => {
    const h = await start()
    const data = {
      token: '381920',
      token_hash: 'pkce_1f0c8d2e4b',
      redirect_to: 'https://app.example.com/welcome',
      email_action_type: 'magiclink',
    }
    const r = await attempt(h, sendEmailInput('ann@example.com', data, h.clock.now()))
    expect(r.status).toBe(200)
    expect(h.delivery.sent[0]).toMatchObject({
      channel: 'email',
      recipient: 'ann@example.com',
      code: '381920',
      subject: 'Your Verification Code',
      text:
        'Your verification code is: 381920\n\n' +
        'https://abcdefgh.supabase.co/auth/v1/verify?token=pkce_1f0c8d2e4b&type=magiclink&redirect_to=https://app.example.com/welcome',
    })
    expect((await written(h)).verifications[0]).toMatchObject({ channel: 'email', checked_by: 'supa' })
  })

  test('a redirect_to holding & = or # is encoded, as Supabase encodes it', async () => {
    const h = await start()
    const data = { token: '381920', token_hash: 'abc', redirect_to: 'https://app.example.com/?next=a&b=1', email_action_type: 'signup' }
    expect((await attempt(h, sendEmailInput('ann@example.com', data, h.clock.now()))).status).toBe(200)
    expect(h.delivery.sent[0]!.text).toEndWith('/verify?token=abc&type=signup&redirect_to=https%3A%2F%2Fapp.example.com%2F%3Fnext%3Da%26b%3D1')
  })

  test('without a token_hash the email carries the code alone', async () => {
    const h = await start()
    expect((await attempt(h, sendEmailInput('ann@example.com', { token: '381920', email_action_type: 'reauthentication' }, h.clock.now()))).status).toBe(200)
    expect(h.delivery.sent[0]!.text).toBe('Your verification code is: 381920')
  })
})

describe('supabase: signatures (401, nothing written or sent)', () => {
  const cases: [string, (h: Harness, payload: string) => Record<string, string>][] = [
    ['no signature headers', () => ({ 'content-type': 'application/json' })],
    ['signed with another secret', (h, p) => signedHeaders([supabaseSecret()], p, h.clock.now())],
    ['signed more than 5 minutes ago', (h, p) => signedHeaders([SECRET], p, h.clock.now() - 5 * MINUTE - 1000)],
    ['signed more than 5 minutes ahead', (h, p) => signedHeaders([SECRET], p, h.clock.now() + 5 * MINUTE + 1000)],
    ['a signature of another webhook-id', (h, p) => ({ ...signedHeaders([SECRET], p, h.clock.now()), 'webhook-id': 'msg_other' })],
    ['a v2 signature only', (h, p) => ({ ...signedHeaders([SECRET], p, h.clock.now()), 'webhook-signature': 'v2,abc' })],
  ]
  for (const [name, headersOf] of cases) {
    test(name, async () => {
      const h = await start()
      const payload = sendSmsInput(PHONE, '613049', h.clock.now())
      const r = await hookCall(h, 'supa', payload, headersOf(h, payload))
      expect(r.status).toBe(401)
      expect(r.json).toEqual({ error: { http_code: 401, message: 'Hook request not authenticated' } })
      expect(h.delivery.sent).toHaveLength(0)
      expect(await written(h)).toEqual({ verifications: [], debits: 0, hookKeys: 0, keyHits: 0 })
    })
  }

  test('a body changed after signing', async () => {
    const h = await start()
    const payload = sendSmsInput(PHONE, '613049', h.clock.now())
    const r = await hookCall(h, 'supa', payload.replace('613049', '000000'), signedHeaders([SECRET], payload, h.clock.now()))
    expect(r.status).toBe(401)
    expect(h.delivery.sent).toHaveLength(0)
  })

  test('one of several signatures matching is enough (a secret being rotated)', async () => {
    const h = await start()
    const payload = sendSmsInput(PHONE, '613049', h.clock.now())
    expect((await hookCall(h, 'supa', payload, signedHeaders([supabaseSecret(), SECRET], payload, h.clock.now()))).status).toBe(200)
  })

  test('asymmetric v1a entries beside the secret are passed over, as Supabase does', async () => {
    const h = await harness(withHooks(HOOK, { SUPABASE_HOOK_SECRET: `v1a,whpk_abc:v1a,whsk_def|${SECRET}` }))
    expect((await attempt(h, sendSmsInput(PHONE, '613049', h.clock.now()))).status).toBe(200)
  })
})

describe("supabase: refusals in Supabase's error object, on a 200", () => {
  const error = (http_code: number, message: string) => ({ error: { http_code, message } })

  test('no credits: 402', async () => {
    const h = await start({}, { credits: 0 })
    const r = await attempt(h, sendSmsInput(PHONE, '613049', h.clock.now()))
    expect(r.status).toBe(200)
    expect(r.json).toEqual(error(402, 'Insufficient credits. Please purchase more credits.'))
    expect(h.delivery.sent).toHaveLength(0)
  })

  test("the hook's own request limit: 429 with Retry-After", async () => {
    const h = await start({ requests_per_minute: 1 })
    expect((await attempt(h, sendSmsInput(PHONE, '613049', h.clock.now()))).status).toBe(200)
    const r = await attempt(h, sendSmsInput('14155550124', '111111', h.clock.now()))
    expect(r.json).toEqual(error(429, 'Rate limit exceeded: Maximum 1 requests per minute. Please try again in 60 seconds.'))
    expect(r.headers.get('retry-after')).toBe('60')
    expect(await balance(h)).toBe(9)
  })

  test('the recipient limit: 429', async () => {
    const h = await start({}, { config: { limits: { recipient_per_minute: 1 } } })
    expect((await attempt(h, sendSmsInput(PHONE, '613049', h.clock.now()))).status).toBe(200)
    const r = await attempt(h, sendSmsInput(PHONE, '222222', h.clock.now()))
    expect(r.json).toEqual(error(429, 'Rate limit exceeded: Maximum 1 verification codes per minute. Please try again in 60 seconds.'))
    expect(h.delivery.sent).toHaveLength(1)
  })

  test('a country the fraud guard does not allow: 403', async () => {
    const h = await start({}, { config: { fraud: { mode: 'enforce', allowed_countries: ['GB'] } } })
    const r = await attempt(h, sendSmsInput(PHONE, '613049', h.clock.now()))
    expect(r.json).toEqual(error(403, 'Sending to this destination country is not allowed: US'))
    expect(await eventTypes(h)).toEqual(['send.blocked'])
  })

  test('no provider took it: 503, the credit refunded', async () => {
    const h = await start()
    h.delivery.fail = true
    const r = await attempt(h, sendSmsInput(PHONE, '613049', h.clock.now()))
    expect(r.json).toEqual(error(503, 'Failed to send verification'))
    expect(await balance(h)).toBe(10)
  })

  test('a payload that is neither hook: 400', async () => {
    const h = await start()
    const r = await attempt(h, JSON.stringify({ metadata: { name: 'custom-access-token' }, claims: {} }))
    expect(r.json).toEqual(error(400, 'Hook payload not understood'))
  })

  test('a phone that is not a number: 400', async () => {
    const h = await start()
    const r = await attempt(h, sendSmsInput('not-a-phone', '613049', h.clock.now()))
    expect(r.json).toEqual(error(400, 'Hook recipient is not a valid phone number or email address'))
  })

  test("the hook's account missing: 503, logged", async () => {
    const h = await start({ account: 'nobody' })
    const r = await attempt(h, sendSmsInput(PHONE, '613049', h.clock.now()))
    expect(r.json).toEqual(error(503, 'Hook is not available'))
    expect(h.logs.some((l) => l.includes('hook account does not exist'))).toBe(true)
  })
})

describe('supabase: the route', () => {
  test('a hook not configured is a 404', async () => {
    const h = await start()
    const payload = sendSmsInput(PHONE, '613049', h.clock.now())
    const r = await hookCall(h, 'other', payload, signedHeaders([SECRET], payload, h.clock.now()))
    expect(r.status).toBe(404)
    expect(r.json.error).toBe('Not found')
  })

  test('a body over 64 KiB is a 413', async () => {
    const h = await start()
    const payload = JSON.stringify({ sms: { phone: PHONE, otp: '613049' }, pad: 'x'.repeat(64 * 1024) })
    const r = await attempt(h, payload)
    expect(r.status).toBe(413)
    expect(await written(h)).toEqual({ verifications: [], debits: 0, hookKeys: 0, keyHits: 0 })
  })

  test('the request log names the hook, never the recipient or the code', async () => {
    const h = await start()
    await attempt(h, sendSmsInput(PHONE, '613049', h.clock.now()))
    const line = h.logs.find((l) => l.includes('"route":"/hooks/:name"'))!
    expect(JSON.parse(line)).toMatchObject({ hook: 'supa', status: 200, outcome: 'sent', channel: 'sms' })
    for (const l of h.logs) {
      expect(l).not.toContain('4155550123')
      expect(l).not.toContain('613049')
      expect(l).not.toContain(SECRET.slice(9))
    }
  })
})
