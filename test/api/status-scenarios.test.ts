/**
 * GET /api/v1/verifications/{verification_id}, its status matrix as one
 * scenario table (docs/api.md#verification-status, docs/api.md#errors): each
 * row the request, the answer, and that reading changed nothing.
 */
import { expect } from 'bun:test'
import { type ApiScenario, given, KEY_ERRORS, type ScenarioContext, scenarioTable, UNKNOWN_KEY } from '../kit/scenario.ts'

const path = (c: ScenarioContext) => `/api/v1/verifications/${c.id}`
const shows =
  (status: string, failedAttempts = 0) =>
  (c: ScenarioContext) => ({
    success: true,
    verification_id: c.id,
    channel: 'sms',
    status,
    failed_attempts: failedAttempts,
  })
/** Reading is not an attempt: the right code still verifies afterwards. */
const stillVerifies = async (c: ScenarioContext) => expect((await c.h.verify({ verification_id: c.id, code: c.code })).json.verified).toBe(true)

scenarioTable(
  'status',
  [
    {
      name: 'pending: 200 with the masked recipient and the accepted delivery; reading is not an attempt',
      method: 'GET',
      path,
      setup: given.pending,
      expectedStatus: 200,
      expectedBody: shows('pending'),
      expectedContent: ['"recipient":"+1415****123"', '"delivery":{"status":"accepted","provider":"recording"'],
      expectedEffects: stillVerifies,
    },
    { name: 'approved: 200', method: 'GET', path, setup: given.approved, expectedStatus: 200, expectedBody: shows('approved') },
    { name: 'expired: 200', method: 'GET', path, setup: given.expired, expectedStatus: 200, expectedBody: shows('expired') },
    {
      name: 'failed delivery: 200 failed, delivery failed',
      method: 'GET',
      path,
      setup: given.failed,
      expectedStatus: 200,
      expectedBody: { ...shows('failed'), delivery: { status: 'failed' } },
    },
    {
      name: 'locked: 200 locked, with its failed attempts',
      method: 'GET',
      path,
      harness: { credits: 5, config: { limits: { max_failed_attempts: 2 } } },
      setup: async (h) => {
        const v = await given.pending(h)
        for (let i = 0; i < 2; i++) await h.verify({ verification_id: v.id, code: '000000' })
        return v
      },
      expectedStatus: 200,
      expectedBody: shows('locked', 2),
    },
    {
      name: 'canceled: 200 canceled',
      method: 'GET',
      path,
      setup: given.canceled,
      expectedStatus: 200,
      expectedBody: shows('canceled'),
    },
    { name: 'HEAD: 200 without a body', method: 'HEAD', path, setup: given.pending, expectedStatus: 200, expectedEffects: (_c, r) => expect(r.text).toBe('') },
    { name: "another key's verification: 404", method: 'GET', path, setup: given.othersPending, expectedStatus: 404, expectedError: 'Verification not found' },
    {
      name: 'an unknown id: 404',
      method: 'GET',
      path: '/api/v1/verifications/00000000-0000-4000-8000-000000000000',
      expectedStatus: 404,
      expectedError: 'Verification not found',
    },
    { name: 'no API key: 401', method: 'GET', path, key: null, setup: given.pending, expectedStatus: 401, expectedError: KEY_ERRORS.missing },
    { name: 'an unknown API key: 401', method: 'GET', path, key: UNKNOWN_KEY, setup: given.pending, expectedStatus: 401, expectedError: KEY_ERRORS.invalid },
    { name: 'a disabled API key: 403', method: 'GET', path, setup: given.disabledKey, expectedStatus: 403, expectedError: KEY_ERRORS.disabled },
    {
      name: 'POST: 405, nothing changes',
      path,
      setup: given.pending,
      expectedStatus: 405,
      expectedError: 'Method not allowed',
      expectedEffects: stillVerifies,
    },
    {
      name: 'over the per-key limit: 429 with Retry-After',
      method: 'GET',
      path,
      harness: { credits: 5, config: { limits: { key_requests_per_minute: 1 } } },
      setup: given.pending,
      expectedStatus: 429,
      expectedBody: { error: 'Rate limit exceeded: Maximum 1 requests per minute. Please try again in 60 seconds.', retry_after: 60 },
      expectedEffects: (_c, r) => expect(r.headers.get('retry-after')).toBe('60'),
    },
  ] satisfies ApiScenario[],
  { credits: 5 },
)
