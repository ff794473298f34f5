/**
 * POST /api/v1/verify, its status matrix as one scenario table
 * (docs/api.md#verify-a-code, docs/api.md#errors): each row the request, the
 * answer, and what changed or did not.
 */
import { expect } from 'bun:test'
import type { Harness } from '../kit/harness.ts'
import { type ApiScenario, given, KEY_ERRORS, type ScenarioContext, scenarioTable, UNKNOWN_KEY } from '../kit/scenario.ts'

const PATH = '/api/v1/verify'
const WRONG = '000000'
const LOCKED = 'Too many failed attempts. Please try again in 15 minutes or request a new code.'
const right = (c: ScenarioContext) => ({ verification_id: c.id, code: c.code })
const wrong = (c: ScenarioContext) => ({ verification_id: c.id, code: WRONG })
const result = (verified: boolean, message: string) => ({ success: true, verified, message })
const statusOf = async (c: ScenarioContext) => (await c.h.call(`/api/v1/verifications/${c.id}`, undefined, { method: 'GET', headers: {} })).json
const stays =
  (status: string, failedAttempts = 0) =>
  async (c: ScenarioContext) =>
    expect(await statusOf(c)).toMatchObject({ status, failed_attempts: failedAttempts })
/** A verification locked by its own lockout: `times` wrong codes (limits.max_failed_attempts). */
const lockedAfter = (times: number) => async (h: Harness) => {
  const v = await given.pending(h)
  for (let i = 0; i < times; i++) await h.verify({ verification_id: v.id, code: WRONG })
  return v
}

scenarioTable(
  'verify',
  [
    {
      name: 'the right code: 200 verified, the verification approved',
      path: PATH,
      setup: given.pending,
      body: right,
      expectedStatus: 200,
      expectedBody: result(true, 'Code verified successfully'),
      expectedEffects: stays('approved'),
    },
    {
      name: 'a wrong code: 200 not verified, one failed attempt counted',
      path: PATH,
      setup: given.pending,
      body: wrong,
      expectedStatus: 200,
      expectedBody: result(false, 'Invalid code'),
      expectedEffects: stays('pending', 1),
    },
    {
      name: 'an expired verification: 200 Code expired',
      path: PATH,
      setup: given.expired,
      body: right,
      expectedStatus: 200,
      expectedBody: result(false, 'Code expired'),
    },
    {
      name: 'a used verification: 200 Code already used',
      path: PATH,
      setup: given.approved,
      body: right,
      expectedStatus: 200,
      expectedBody: result(false, 'Code already used'),
    },
    {
      name: 'locked (its own lockout): 429, verify-shaped, with Retry-After; the right code too',
      path: PATH,
      harness: { credits: 5, config: { limits: { max_failed_attempts: 2 } } },
      setup: lockedAfter(2),
      body: right,
      expectedStatus: 429,
      expectedBody: { ...result(false, LOCKED), retry_after: 900 },
      expectedEffects: async (c, r) => {
        expect(r.headers.get('retry-after')).toBe('900')
        expect((await statusOf(c)).status).toBe('locked')
      },
    },
    {
      name: "another key's verification: 404",
      path: PATH,
      setup: given.othersPending,
      body: right,
      expectedStatus: 404,
      expectedError: 'Verification not found',
    },
    {
      name: 'a canceled verification: 404',
      path: PATH,
      setup: async (h) => {
        const v = await given.pending(h)
        expect((await h.call(`/api/v1/verifications/${v.id}/cancel`, undefined, { headers: {} })).status).toBe(200)
        return v
      },
      body: right,
      expectedStatus: 404,
      expectedError: 'Verification not found',
    },
    {
      name: 'a failed delivery: 404',
      path: PATH,
      setup: given.failed,
      body: (c) => ({ verification_id: c.id, code: '123456' }),
      expectedStatus: 404,
      expectedError: 'Verification not found',
    },
    {
      name: 'an unknown id: 404',
      path: PATH,
      body: { verification_id: '00000000-0000-4000-8000-000000000000', code: '123456' },
      expectedStatus: 404,
      expectedError: 'Verification not found',
    },
    { name: 'no verification_id: 400', path: PATH, body: { code: '123456' }, expectedStatus: 400, expectedError: 'verification_id is required' },
    {
      name: 'no code: 400',
      path: PATH,
      setup: given.pending,
      body: (c) => ({ verification_id: c.id }),
      expectedStatus: 400,
      expectedError: 'code is required',
    },
    {
      name: 'a code that is not 4-10 digits: 400, no attempt counted',
      path: PATH,
      setup: given.pending,
      body: (c) => ({ verification_id: c.id, code: '12ab' }),
      expectedStatus: 400,
      expectedError: 'code must be a numeric string between 4-10 digits',
      expectedEffects: stays('pending'),
    },
    { name: 'not JSON: 400', path: PATH, raw: '{"verification_id":', expectedStatus: 400, expectedError: 'Request body must be valid JSON' },
    {
      name: 'a body over 16 KiB: 413',
      path: PATH,
      raw: `{"pad":"${'x'.repeat(16_400)}"}`,
      expectedStatus: 413,
      expectedError: 'Request body too large',
    },
    {
      name: 'no API key: 401',
      path: PATH,
      key: null,
      setup: given.pending,
      body: right,
      expectedStatus: 401,
      expectedError: KEY_ERRORS.missing,
      expectedEffects: stays('pending'),
    },
    {
      name: 'an unknown API key: 401',
      path: PATH,
      key: UNKNOWN_KEY,
      setup: given.pending,
      body: right,
      expectedStatus: 401,
      expectedError: KEY_ERRORS.invalid,
      expectedEffects: stays('pending'),
    },
    { name: 'a disabled API key: 403', path: PATH, setup: given.disabledKey, body: right, expectedStatus: 403, expectedError: KEY_ERRORS.disabled },
    { name: 'GET: 405', method: 'GET', path: PATH, expectedStatus: 405, expectedError: 'Method not allowed' },
    {
      name: 'over the per-key limit: 429 with Retry-After, nothing verified',
      path: PATH,
      harness: { credits: 5, config: { limits: { key_requests_per_minute: 1 } } },
      setup: given.pending,
      body: right,
      expectedStatus: 429,
      expectedBody: { error: 'Rate limit exceeded: Maximum 1 requests per minute. Please try again in 60 seconds.', retry_after: 60 },
      expectedEffects: async (c, r) => {
        expect(r.headers.get('retry-after')).toBe('60')
        c.h.clock.advance(60_000)
        expect((await statusOf(c)).status).toBe('pending')
      },
    },
  ] satisfies ApiScenario[],
  { credits: 5 },
)
