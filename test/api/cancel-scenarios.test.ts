/**
 * POST /api/v1/verifications/{verification_id}/cancel, its status matrix as
 * one scenario table (docs/api.md#cancel, docs/api.md#errors): each row the
 * request, the answer, and what changed or did not.
 */
import { expect } from 'bun:test'
import { type Result, TEST } from '../kit/harness.ts'
import { type ApiScenario, given, KEY_ERRORS, type ScenarioContext, scenarioTable, UNKNOWN_KEY } from '../kit/scenario.ts'

const path = (c: ScenarioContext) => `/api/v1/verifications/${c.id}/cancel`
const statusOf = async (c: ScenarioContext) => (await c.h.call(`/api/v1/verifications/${c.id}`, undefined, { method: 'GET', headers: {} })).json.status
const stays = (status: string) => async (c: ScenarioContext) => expect(await statusOf(c)).toBe(status)
const canceled = (c: ScenarioContext) => ({ success: true, verification_id: c.id, status: 'canceled' })
/** The whole 200 body, nothing more: `{ success, verification_id, status, request_id }`. */
const exactlyCanceled = (c: ScenarioContext, r: Result) => expect(r.json).toEqual({ ...canceled(c), request_id: r.headers.get('x-request-id')! })
/** A pending verification to a test recipient (no credit involved). */
const testPending: ApiScenario['setup'] = async (h) => ({ id: (await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).json.verification_id })

/** Bodies cancel accepts (docs/api.md#cancel: empty, whitespace, or a JSON object, ignored). */
const accepted: [string, Record<string, string>, string | undefined][] = [
  ['no body, no Content-Type', {}, undefined],
  ['an empty body with Content-Type text/plain', { 'content-type': 'text/plain' }, ''],
  ['an empty body with Content-Type application/json', { 'content-type': 'application/json' }, ''],
  ['only whitespace, any Content-Type', { 'content-type': 'application/x-www-form-urlencoded' }, ' \r\n\t'],
  ['an empty JSON object', { 'content-type': 'application/json' }, '{}'],
  ['a JSON object with fields (ignored)', { 'content-type': 'application/json; charset=utf-8' }, '{"reason":"user asked","id":"other"}'],
]
/** Bodies cancel refuses, with the usual 400 and 413. */
const refused: [string, Record<string, string>, string, number, string][] = [
  ['invalid JSON', { 'content-type': 'application/json' }, '{"a":', 400, 'Request body must be valid JSON'],
  ['a JSON array', { 'content-type': 'application/json' }, '[]', 400, 'Request body must be a JSON object'],
  ['a JSON string', { 'content-type': 'application/json' }, '"x"', 400, 'Request body must be a JSON object'],
  ['JSON null', { 'content-type': 'application/json' }, 'null', 400, 'Request body must be a JSON object'],
  ['a non-empty body that is not JSON by its Content-Type', { 'content-type': 'text/plain' }, '{}', 400, 'Content-Type must be application/json'],
  ['a body over 16 KiB', { 'content-type': 'application/json' }, `{"pad":"${'x'.repeat(16_400)}"}`, 413, 'Request body too large'],
]

scenarioTable(
  'cancel',
  [
    {
      name: 'pending: 200 canceled; then verify answers 404 and the credit stays spent',
      path,
      setup: given.pending,
      expectedStatus: 200,
      expectedBody: canceled,
      expectedEffects: async (c, r) => {
        exactlyCanceled(c, r)
        expect(await statusOf(c)).toBe('canceled')
        expect((await c.h.verify({ verification_id: c.id, code: c.code })).status).toBe(404)
        expect((await c.h.server.admin.balance()).balance).toBe(4)
      },
    },
    {
      name: 'already canceled: the same 200',
      path,
      setup: given.canceled,
      expectedStatus: 200,
      expectedBody: canceled,
      expectedEffects: exactlyCanceled,
    },
    {
      name: 'approved: 409',
      path,
      setup: given.approved,
      expectedStatus: 409,
      expectedError: 'Verification is already approved',
      expectedEffects: stays('approved'),
    },
    {
      name: 'expired: 409',
      path,
      setup: given.expired,
      expectedStatus: 409,
      expectedError: 'Verification is already expired',
      expectedEffects: stays('expired'),
    },
    {
      name: 'failed delivery: 409',
      path,
      setup: given.failed,
      expectedStatus: 409,
      expectedError: 'Verification is already failed',
      expectedEffects: stays('failed'),
    },
    { name: "another key's verification: 404", path, setup: given.othersPending, expectedStatus: 404, expectedError: 'Verification not found' },
    {
      name: 'an unknown id: 404',
      path: '/api/v1/verifications/00000000-0000-4000-8000-000000000000/cancel',
      expectedStatus: 404,
      expectedError: 'Verification not found',
    },
    { name: 'no API key: 401', path, key: null, setup: testPending, expectedStatus: 401, expectedError: KEY_ERRORS.missing, expectedEffects: stays('pending') },
    {
      name: 'an unknown API key: 401',
      path,
      key: UNKNOWN_KEY,
      setup: testPending,
      expectedStatus: 401,
      expectedError: KEY_ERRORS.invalid,
      expectedEffects: stays('pending'),
    },
    {
      name: 'a disabled API key: 403',
      path,
      setup: given.disabledKey,
      expectedStatus: 403,
      expectedError: KEY_ERRORS.disabled,
      expectedEffects: stays('pending'),
    },
    { name: 'GET: 405', method: 'GET', path, setup: testPending, expectedStatus: 405, expectedError: 'Method not allowed', expectedEffects: stays('pending') },
    {
      name: 'a malformed Idempotency-Key: 400',
      path,
      headers: { 'idempotency-key': 'has space' },
      setup: testPending,
      expectedStatus: 400,
      expectedError: 'Idempotency-Key must be 1-255 visible ASCII characters',
      expectedEffects: stays('pending'),
    },
    {
      name: 'over the per-key limit: 429 with Retry-After, nothing changes',
      path,
      harness: { credits: 5, config: { limits: { key_requests_per_minute: 1 } } },
      setup: testPending,
      expectedStatus: 429,
      expectedBody: { error: 'Rate limit exceeded: Maximum 1 requests per minute. Please try again in 60 seconds.', retry_after: 60 },
      expectedEffects: async (c, r) => {
        expect(r.headers.get('retry-after')).toBe('60')
        c.h.clock.advance(60_000)
        expect(await statusOf(c)).toBe('pending')
      },
    },
    ...accepted.map(
      ([name, headers, raw]): ApiScenario => ({
        name: `body accepted: ${name}`,
        path,
        headers,
        raw,
        setup: testPending,
        expectedStatus: 200,
        expectedBody: canceled,
        expectedEffects: exactlyCanceled,
      }),
    ),
    ...refused.map(
      ([name, headers, raw, status, error]): ApiScenario => ({
        name: `body refused, and nothing changes: ${name} -> ${status}`,
        path,
        headers,
        raw,
        setup: testPending,
        expectedStatus: status,
        expectedError: error,
        expectedEffects: stays('pending'),
      }),
    ),
  ],
  { credits: 5 },
)
