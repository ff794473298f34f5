/**
 * The OpenAPI 3.1 document served at GET /api/v1/openapi.json, built from the
 * TypeBox schemas the routes validate with (models.ts) and the message
 * catalogue, so it cannot drift from what the server answers. TypeBox schemas
 * are JSON Schema; JSON.stringify drops their symbol keys.
 */
import type { TSchema } from '@sinclair/typebox'
import { Msg } from './messages.ts'
import * as M from './models.ts'

type Json = Record<string, unknown>

const plain = (s: TSchema): Json => JSON.parse(JSON.stringify(s)) as Json
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

const SCHEMAS: Record<string, TSchema> = {
  SendBody: M.SendBody,
  VerifyBody: M.VerifyBody,
  SendResponse: M.SendResponse,
  VerifyResponse: M.VerifyResponse,
  LockoutResponse: M.LockoutResponse,
  ErrorResponse: M.ErrorResponse,
  HealthResponse: M.HealthResponse,
  ReadyResponse: M.ReadyResponse,
  NotReadyResponse: M.NotReadyResponse,
}

const requestIdHeader = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } }
const retryHeaders = { ...requestIdHeader, 'Retry-After': { $ref: '#/components/headers/RetryAfter' } }

function response(description: string, schema: Json, opts: { retry?: boolean } = {}) {
  return { description, headers: opts.retry ? retryHeaders : requestIdHeader, content: { 'application/json': { schema } } }
}
const errors = (description: string, messages: (string | TSchema)[], retry = false) => response(description, plain(M.ErrorWith(messages, { retryAfter: retry })), { retry })

const bodyErrors = [Msg.contentType, Msg.invalidJson, Msg.notObject]
const common = {
  '401': errors('No API key, or an unknown or revoked one', [Msg.keyRequired, Msg.keyInvalid]),
  '403': errors('The API key is disabled', [Msg.keyDisabled]),
  '413': errors('Body over 16 KiB', [Msg.bodyTooLarge]),
}
const apiSecurity = [{ bearerAuth: [] }, { apiKeyHeader: [] }]

/** Request examples; the OpenAPI test checks each against its request schema. */
export const SEND_EXAMPLES = {
  sms: { summary: 'SMS with a generated code', value: { channel: 'sms', recipient: '+14155550123' } },
  email: {
    summary: 'Email with template, subject and expiry',
    value: { channel: 'email', recipient: 'ann@example.com', message: 'Your code for Example: {code}', subject: 'Your Example code', expires_in: 600 },
  },
  custom_code: { summary: 'Voice with your own code', value: { channel: 'voice', recipient: '+14155550123', code: '4821' } },
  test_recipient: { summary: 'A test recipient: nothing delivered, no credit, code 123456', value: { channel: 'sms', recipient: '+15550100001' } },
}
export const VERIFY_EXAMPLES = {
  verify: { summary: 'Check a code', value: { verification_id: '6f1c2b9e-3d4a-4c5b-8e7f-0a1b2c3d4e5f', code: '123456' } },
}

export function buildOpenApi(version: string): Json {
  const send = {
    operationId: 'sendCode',
    summary: 'Create a verification and deliver its code',
    description: 'Costs one credit unless the recipient is a test recipient; a failed delivery is refunded.',
    security: apiSecurity,
    requestBody: { required: true, content: { 'application/json': { schema: ref('SendBody'), examples: SEND_EXAMPLES } } },
    responses: {
      '200': response('The verification was created and its code delivered', ref('SendResponse')),
      '400': errors('Bad body or field; the message names the field', [
        ...bodyErrors,
        Msg.channel,
        Msg.recipientPhone,
        Msg.recipientEmail,
        Msg.message,
        Msg.messagePlaceholder,
        Msg.subject,
        Msg.expiresIn,
        Msg.code,
      ]),
      ...common,
      '402': errors('Not enough credits', [Msg.insufficientCredits]),
      '429': errors('Per-key rate limit or per-recipient send limit', [M.KeyRateLimitMessage, M.RecipientRateLimitMessage], true),
      '500': errors('Delivery failed (the credit is refunded) or an internal fault', [Msg.sendFailed]),
    },
  }
  const verify = {
    operationId: 'verifyCode',
    summary: 'Check a code',
    description: 'Status 200 means processed: read `verified`.',
    security: apiSecurity,
    requestBody: { required: true, content: { 'application/json': { schema: ref('VerifyBody'), examples: VERIFY_EXAMPLES } } },
    responses: {
      '200': response('Processed; `verified` tells whether the code was right', ref('VerifyResponse')),
      '400': errors('Bad body or field', [...bodyErrors, Msg.verificationIdRequired, Msg.codeRequired, Msg.code]),
      ...common,
      '404': errors('No such verification for this key', [Msg.verificationNotFound]),
      '429': {
        description: 'Per-key rate limit (error body), or the verification is locked after too many wrong codes (verify-shaped body)',
        headers: retryHeaders,
        content: { 'application/json': { schema: { anyOf: [plain(M.ErrorWith([M.KeyRateLimitMessage], { retryAfter: true })), ref('LockoutResponse')] } } },
      },
      '500': errors('Internal fault', [Msg.internal]),
    },
  }
  const noAuth: never[] = []
  return {
    openapi: '3.1.0',
    info: {
      title: 'otpd',
      version,
      description:
        'Send one-time codes by SMS, email or voice and verify them. Every response is JSON with a `request_id` (also in `X-Request-Id`). ' +
        'An unknown path answers 404 and another method on a known path 405 (components.responses).',
    },
    paths: {
      '/api/v1/send': { post: send },
      '/api/v1/verify': { post: verify },
      '/healthz': {
        get: { operationId: 'health', summary: 'The process is up', security: noAuth, responses: { '200': response('Up', ref('HealthResponse')) } },
      },
      '/readyz': {
        get: {
          operationId: 'ready',
          summary: 'Database writable, migrations applied, delivery configuration valid',
          security: noAuth,
          responses: { '200': response('Ready', ref('ReadyResponse')), '503': response('A check failed; `error` names it (details in the server log)', ref('NotReadyResponse')) },
        },
      },
      '/metrics': {
        get: {
          operationId: 'metrics',
          summary: 'Prometheus metrics (on the main listener only when server.metrics_token is set; otherwise 404)',
          security: [{ metricsToken: [] }],
          responses: {
            '200': { description: 'Prometheus text format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } },
            '401': errors('No metrics token, or a wrong one', [Msg.metricsTokenRequired, Msg.metricsTokenInvalid]),
          },
        },
      },
      '/api/v1/openapi.json': {
        get: {
          operationId: 'openapi',
          summary: 'This document',
          security: noAuth,
          responses: { '200': { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object' } } } } },
        },
      },
    },
    components: {
      schemas: Object.fromEntries(Object.entries(SCHEMAS).map(([k, v]) => [k, plain(v)])),
      responses: {
        NotFound: errors('Unknown path', [Msg.notFound]),
        MethodNotAllowed: errors('Known path, another method', [Msg.methodNotAllowed]),
      },
      headers: {
        RequestId: { description: 'The request id, as in the body', schema: { type: 'string' } },
        RetryAfter: { description: 'Seconds to wait, as `retry_after` in the body', schema: { type: 'integer', minimum: 1 } },
      },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'The API key as `Authorization: Bearer <key>` (recommended; wins over x-api-key).' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The API key as `x-api-key: <key>`.' },
        metricsToken: { type: 'http', scheme: 'bearer', description: '`server.metrics_token`, for /metrics on the main listener.' },
      },
    },
  }
}
