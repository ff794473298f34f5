/**
 * POST /api/v1/send, its status matrix as one scenario table
 * (docs/api.md#send-a-code, docs/api.md#errors): each row the request, the
 * answer, and what it delivered and charged, or did not.
 */
import { expect } from 'bun:test'
import { TEST, UUID_V4 } from '../kit/harness.ts'
import { type ApiScenario, given, KEY_ERRORS, type ScenarioContext, scenarioTable, UNKNOWN_KEY } from '../kit/scenario.ts'
import { uz } from '../kit/fraud.ts'

const PATH = '/api/v1/send'
const PHONE = '+14155550123'
const sms = (extra: Record<string, unknown> = {}) => ({ channel: 'sms', recipient: PHONE, ...extra })
const balance = async (c: ScenarioContext) => (await c.h.server.admin.balance()).balance
/** Nothing delivered past what the set-up sent, and the balance as the set-up left it (5 credits, less its sends). */
const nothingSpent =
  (delivered = 0, credits = 5) =>
  async (c: ScenarioContext) => {
    expect(c.h.delivery.sent).toHaveLength(delivered)
    expect(await balance(c)).toBe(credits)
  }
const invalid = (name: string, body: Record<string, unknown>, error: string): ApiScenario => ({
  name: `${name}: 400, nothing delivered or charged`,
  path: PATH,
  body,
  expectedStatus: 400,
  expectedError: error,
  expectedEffects: nothingSpent(),
})

scenarioTable(
  'send',
  [
    {
      name: 'sms to a real recipient: 200, delivered once, one credit debited',
      path: PATH,
      body: sms({ expires_in: 120 }),
      expectedStatus: 200,
      expectedBody: { success: true, expires_at: '2026-01-01T12:02:00.000Z' },
      expectedEffects: async (c, r) => {
        expect(r.json.verification_id).toMatch(UUID_V4)
        expect(c.h.delivery.sent).toHaveLength(1)
        expect(await balance(c)).toBe(4)
      },
    },
    {
      name: 'email to a test recipient: 200, nothing delivered or charged',
      path: PATH,
      body: { channel: 'email', recipient: TEST.EMAIL_SUCCESS },
      expectedStatus: 200,
      expectedBody: { success: true },
      expectedEffects: nothingSpent(),
    },
    invalid('no channel', { recipient: PHONE }, 'channel is required and must be one of: sms, email, voice, whatsapp'),
    invalid(
      'a phone number not in E.164',
      { channel: 'voice', recipient: '4155550123' },
      'recipient must be a valid E.164 phone number for SMS and voice channels',
    ),
    invalid(
      'an email recipient that is no address',
      { channel: 'email', recipient: 'not-an-address' },
      'recipient must be a valid email address for the email channel',
    ),
    invalid('a message without {code}', sms({ message: 'hello' }), 'message must contain the {code} placeholder'),
    invalid('a subject of two lines', sms({ subject: 'a\nb' }), 'subject must be a single line of 1-200 characters'),
    invalid('expires_in under 60', sms({ expires_in: 59 }), 'expires_in must be an integer between 60 and 3600'),
    invalid('a code that is not 4-10 digits', sms({ code: '12a4' }), 'code must be a numeric string between 4-10 digits'),
    invalid('an ip that is no address', sms({ ip: 'x' }), 'ip must be a valid IPv4 or IPv6 address'),
    invalid('an unknown locale', sms({ locale: 'zz-ZZ' }), 'locale must be a supported language tag'),
    invalid('an app_hash of the wrong length', sms({ app_hash: 'short' }), 'app_hash must be 11 characters of base64'),
    {
      name: 'a body sent as text/plain: 400',
      path: PATH,
      headers: { 'content-type': 'text/plain' },
      raw: JSON.stringify(sms()),
      expectedStatus: 400,
      expectedError: 'Content-Type must be application/json',
      expectedEffects: nothingSpent(),
    },
    {
      name: 'not JSON: 400',
      path: PATH,
      raw: '{"channel":',
      expectedStatus: 400,
      expectedError: 'Request body must be valid JSON',
      expectedEffects: nothingSpent(),
    },
    {
      name: 'a JSON array: 400',
      path: PATH,
      raw: '[]',
      expectedStatus: 400,
      expectedError: 'Request body must be a JSON object',
      expectedEffects: nothingSpent(),
    },
    {
      name: 'a body over 16 KiB: 413',
      path: PATH,
      body: sms({ pad: 'x'.repeat(16_400) }),
      expectedStatus: 413,
      expectedError: 'Request body too large',
      expectedEffects: nothingSpent(),
    },
    {
      name: 'no credits: 402, nothing delivered',
      path: PATH,
      harness: { credits: 0 },
      body: sms(),
      expectedStatus: 402,
      expectedError: 'Insufficient credits. Please purchase more credits.',
      expectedEffects: nothingSpent(0, 0),
    },
    { name: 'no API key: 401', path: PATH, key: null, body: sms(), expectedStatus: 401, expectedError: KEY_ERRORS.missing, expectedEffects: nothingSpent() },
    {
      name: 'an unknown API key: 401',
      path: PATH,
      key: UNKNOWN_KEY,
      body: sms(),
      expectedStatus: 401,
      expectedError: KEY_ERRORS.invalid,
      expectedEffects: nothingSpent(),
    },
    {
      name: 'a disabled API key: 403',
      path: PATH,
      setup: given.disabledKey,
      body: sms({ recipient: '+14155550127' }),
      expectedStatus: 403,
      expectedError: KEY_ERRORS.disabled,
      expectedEffects: nothingSpent(1, 4),
    },
    {
      name: 'a country the fraud guard does not allow: 403 with its code',
      path: PATH,
      harness: { credits: 5, config: { fraud: { mode: 'enforce', allowed_countries: ['US'] } } },
      body: { channel: 'sms', recipient: uz(1) },
      expectedStatus: 403,
      expectedError: 'Sending to this destination country is not allowed: UZ',
      expectedEffects: nothingSpent(),
    },
    { name: 'GET: 405', method: 'GET', path: PATH, expectedStatus: 405, expectedError: 'Method not allowed', expectedEffects: nothingSpent() },
    {
      name: 'a malformed Idempotency-Key: 400',
      path: PATH,
      headers: { 'content-type': 'application/json', 'idempotency-key': 'has space' },
      body: sms(),
      expectedStatus: 400,
      expectedError: 'Idempotency-Key must be 1-255 visible ASCII characters',
      expectedEffects: nothingSpent(),
    },
    {
      name: 'over the per-key limit: 429 with Retry-After',
      path: PATH,
      harness: { credits: 5, config: { limits: { key_requests_per_minute: 1 } } },
      setup: async (h) => {
        expect((await h.send({ channel: 'email', recipient: TEST.EMAIL_SUCCESS })).status).toBe(200)
        return {}
      },
      body: sms(),
      expectedStatus: 429,
      expectedBody: { error: 'Rate limit exceeded: Maximum 1 requests per minute. Please try again in 60 seconds.', retry_after: 60 },
      expectedEffects: async (c, r) => {
        expect(r.headers.get('retry-after')).toBe('60')
        await nothingSpent()(c)
      },
    },
    {
      name: 'over the per-recipient limit: 429 with Retry-After, nothing delivered or charged',
      path: PATH,
      harness: { credits: 5, config: { limits: { recipient_per_minute: 1 } } },
      setup: given.pending,
      body: sms(),
      expectedStatus: 429,
      expectedContent: ['"error":"Rate limit exceeded: Maximum 1 verification codes per minute. Please try again in '],
      expectedEffects: async (c, r) => {
        expect(Number(r.headers.get('retry-after'))).toBe(r.json.retry_after)
        await nothingSpent(1, 4)(c)
      },
    },
    {
      name: 'no provider takes the message: 500, the credit refunded',
      path: PATH,
      setup: async (h) => {
        h.delivery.fail = true
        return {}
      },
      body: sms(),
      expectedStatus: 500,
      expectedError: 'Failed to send verification',
      expectedEffects: nothingSpent(),
    },
  ] satisfies ApiScenario[],
  { credits: 5 },
)
