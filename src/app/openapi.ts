/**
 * The OpenAPI 3.1 document served at GET /api/v1/openapi.json, built from the
 * TypeBox schemas in models.ts and the message catalogue, so it cannot drift
 * from what the server answers. TypeBox schemas are JSON Schema; JSON.stringify
 * drops their symbol keys, and `plain` turns a union of constants into an
 * `enum`, which generators read as a fixed value set.
 *
 * Written for generated clients (openapi-typescript, openapi-fetch): one
 * server whose URL is the origin (the contract's {base_url} is that plus
 * /api/v1), a send body that is a `oneOf` discriminated by `channel`, one
 * named `ErrorResponse` under every error, 404 and 405 on every operation,
 * and an example on every response. The document describes the API; the
 * routes keep their own validation and its exact messages.
 */
import type { TSchema } from '@sinclair/typebox'
import { CONSOLE_SECURITY_SCHEMES, CONSOLE_TAG, consolePaths, consoleSchemas } from '../console/openapi.ts'
import { Msg } from '../http/messages.ts'
import * as M from '../http/models.ts'

import {
  errorSchema,
  errors,
  type Json,
  type Message,
  methodNotAllowed,
  notFound,
  plain,
  REQUEST_ID,
  ref,
  replayHeader,
  response,
  retryHeaders,
  sample,
} from '../http/openapi-parts.ts'

const SCHEMAS: Record<string, TSchema> = {
  SmsSendBody: M.SmsSendBody,
  VoiceSendBody: M.VoiceSendBody,
  EmailSendBody: M.EmailSendBody,
  VerifyBody: M.VerifyBody,
  CancelBody: M.CancelBody,
  WebhookReceipt: M.WebhookReceipt,
  SendResponse: M.SendResponse,
  VerifyResponse: M.VerifyResponse,
  LockoutResponse: M.LockoutResponse,
  StatusResponse: M.StatusResponse,
  CancelResponse: M.CancelResponse,
  ReceiptResponse: M.ReceiptResponse,
  ErrorResponse: M.ErrorResponse,
  HealthResponse: M.HealthResponse,
  ReadyResponse: M.ReadyResponse,
  NotReadyResponse: M.NotReadyResponse,
}

const VERIFICATION_ID = '6f1c2b9e-3d4a-4c5b-8e7f-0a1b2c3d4e5f'
const AT = '2026-01-01T12:05:00.000Z'

const bodyErrors = [Msg.contentType, Msg.invalidJson, Msg.notObject]
const idempotencyErrors = (extra409: Message[] = []) => ({
  '409': errors(
    'The first request with this Idempotency-Key is still running' + (extra409.length ? ', or the verification is over' : ''),
    [...extra409, Msg.idempotencyInProgress],
    {
      replay: true,
    },
  ),
  '422': errors('This Idempotency-Key was used with another body', [Msg.idempotencyConflict]),
})
const auth = {
  '401': errors('No API key, or an unknown or revoked one', [Msg.keyRequired, Msg.keyInvalid]),
}
const apiSecurity = [{ bearerAuth: [] }, { apiKeyHeader: [] }]
const idempotencyParam = { $ref: '#/components/parameters/IdempotencyKey' }
const verificationIdParam = { $ref: '#/components/parameters/VerificationId' }

/** Request examples; the OpenAPI test checks each against its request schema. */
export const SEND_EXAMPLES = {
  sms: { summary: 'SMS with a generated code', value: { channel: 'sms', recipient: '+14155550123' } },
  email: {
    summary: 'Email with template, subject and expiry',
    value: { channel: 'email', recipient: 'ann@example.com', message: 'Your code for Example: {code}', subject: 'Your Example code', expires_in: 600 },
  },
  custom_code: { summary: 'Voice with your own code', value: { channel: 'voice', recipient: '+14155550123', code: '4821' } },
  with_ip: { summary: "SMS with the end user's IP address (fraud guard)", value: { channel: 'sms', recipient: '+14155550123', ip: '203.0.113.7' } },
  localized: {
    summary: 'SMS in Spanish, with the Android SMS Retriever hash',
    value: { channel: 'sms', recipient: '+5215512345678', locale: 'es', app_hash: 'FA+9qCX9VSu' },
  },
  test_phone_success: { summary: 'Test recipient: verifies with 123456; nothing delivered, no credit', value: { channel: 'sms', recipient: '+15550100001' } },
  test_phone_fail: { summary: 'Test recipient: every code answers `Invalid code`', value: { channel: 'sms', recipient: '+15550100002' } },
  test_phone_expired: { summary: 'Test recipient: created already expired', value: { channel: 'voice', recipient: '+15550100003' } },
  test_email_success: { summary: 'Test recipient: verifies with 123456', value: { channel: 'email', recipient: 'success@otpd.test' } },
  test_email_fail: { summary: 'Test recipient: every code answers `Invalid code`', value: { channel: 'email', recipient: 'fail@otpd.test' } },
}
export const VERIFY_EXAMPLES = {
  verify: { summary: 'Check a code', value: { verification_id: VERIFICATION_ID, code: '123456' } },
}

const TEST_RECIPIENTS =
  '\n\nTest recipients (any real key; nothing delivered, no credit, no per-recipient limit; code always `123456`):\n\n' +
  '| recipient | channels | behaviour |\n|---|---|---|\n' +
  '| `+15550100001` | sms, voice | verifies with `123456` |\n' +
  '| `+15550100002` | sms, voice | every code answers `Invalid code` |\n' +
  '| `+15550100003` | sms, voice | created already expired |\n' +
  '| `success@otpd.test` | email | verifies with `123456` |\n' +
  '| `fail@otpd.test` | email | every code answers `Invalid code` |'

export function buildOpenApi(version: string): Json {
  const keyLimited = M.KeyRateLimitMessage
  const send = {
    operationId: 'sendCode',
    tags: ['Verifications'],
    summary: 'Create a verification and deliver its code',
    description: 'Costs one credit unless the recipient is a test recipient; a failed delivery is refunded.' + TEST_RECIPIENTS,
    security: apiSecurity,
    parameters: [idempotencyParam],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            oneOf: [ref('SmsSendBody'), ref('VoiceSendBody'), ref('EmailSendBody')],
            discriminator: {
              propertyName: 'channel',
              mapping: { sms: '#/components/schemas/SmsSendBody', voice: '#/components/schemas/VoiceSendBody', email: '#/components/schemas/EmailSendBody' },
            },
          },
          examples: SEND_EXAMPLES,
        },
      },
    },
    responses: {
      '200': response(
        'The verification was created and its code delivered',
        ref('SendResponse'),
        { success: true, verification_id: VERIFICATION_ID, expires_at: AT, request_id: REQUEST_ID },
        { replay: true },
      ),
      '400': errors('Bad body, field or Idempotency-Key; the message names it', [
        ...bodyErrors,
        Msg.channel,
        Msg.recipientPhone,
        Msg.recipientEmail,
        Msg.message,
        Msg.messagePlaceholder,
        Msg.subject,
        Msg.expiresIn,
        Msg.code,
        Msg.ip,
        Msg.locale,
        Msg.appHash,
        M.SmsTooLongMessage,
        Msg.idempotencyKey,
      ]),
      ...auth,
      '402': errors('Not enough credits', [Msg.insufficientCredits], { replay: true }),
      '403': errors('The API key is disabled, or the fraud guard does not allow this destination country', [Msg.keyDisabled, M.CountryBlockedMessage], {
        replay: true,
      }),
      '404': notFound,
      ...methodNotAllowed,
      ...idempotencyErrors(),
      '413': errors('Body over 16 KiB', [Msg.bodyTooLarge]),
      '429': errors(
        'Per-key rate limit, per-recipient send limit or failure cap, or the fraud guard (per-IP limit, suspected SMS pumping, daily credit cap)',
        [M.RecipientRateLimitMessage, keyLimited, M.RecipientFailureCapMessage, M.IpRateLimitMessage, M.PumpingBlockedMessage, M.DailyCreditLimitMessage],
        { retry: true, replay: true },
      ),
      '500': errors('Delivery failed (the credit is refunded) or an internal fault', [Msg.sendFailed], { replay: true }),
    },
  }
  const verify = {
    operationId: 'verifyCode',
    tags: ['Verifications'],
    summary: 'Check a code',
    description: 'Status 200 means processed: read `verified`.',
    security: apiSecurity,
    parameters: [idempotencyParam],
    requestBody: { required: true, content: { 'application/json': { schema: ref('VerifyBody'), examples: VERIFY_EXAMPLES } } },
    responses: {
      '200': response(
        'Processed; `verified` tells whether the code was right',
        ref('VerifyResponse'),
        { success: true, verified: true, message: Msg.verified, request_id: REQUEST_ID },
        { replay: true },
      ),
      '400': errors('Bad body, field or Idempotency-Key', [...bodyErrors, Msg.verificationIdRequired, Msg.codeRequired, Msg.code, Msg.idempotencyKey]),
      ...auth,
      '403': errors('The API key is disabled', [Msg.keyDisabled]),
      '404': errors('No such verification for this key (or it was canceled, or its delivery failed)', [Msg.verificationNotFound], { replay: true }),
      ...methodNotAllowed,
      ...idempotencyErrors(),
      '413': errors('Body over 16 KiB', [Msg.bodyTooLarge]),
      '429': {
        description: 'Per-key rate limit (error body), or the verification is locked after too many wrong codes (verify-shaped body)',
        headers: { ...retryHeaders, ...replayHeader },
        content: {
          'application/json': {
            schema: { oneOf: [errorSchema([keyLimited], true), ref('LockoutResponse')] },
            examples: {
              lockout: {
                summary: 'Locked after too many wrong codes',
                value: { success: true, verified: false, message: sample(M.LockoutMessage), request_id: REQUEST_ID, retry_after: 900 },
              },
              key_limited: { summary: 'Per-key rate limit', value: { error: sample(keyLimited), request_id: REQUEST_ID, retry_after: 12 } },
            },
          },
        },
      },
      '500': errors('Internal fault', [Msg.internal], { replay: true }),
    },
  }
  const status = {
    operationId: 'getVerification',
    tags: ['Verifications'],
    summary: 'What became of a verification',
    description: 'Reading a status is not an attempt and changes nothing.',
    security: apiSecurity,
    responses: {
      '200': response('The verification', ref('StatusResponse'), {
        success: true,
        verification_id: VERIFICATION_ID,
        channel: 'sms',
        recipient: '+1415****123',
        status: 'pending',
        created_at: '2026-01-01T12:00:00.000Z',
        expires_at: AT,
        failed_attempts: 0,
        delivery: { status: 'delivered', provider: 'twilio_main', updated_at: '2026-01-01T12:00:04.000Z' },
        request_id: REQUEST_ID,
      }),
      ...auth,
      '403': errors('The API key is disabled', [Msg.keyDisabled]),
      '404': errors('No such verification for this key', [Msg.verificationNotFound, Msg.notFound]),
      ...methodNotAllowed,
      '429': errors('Per-key rate limit', [keyLimited], { retry: true }),
      '500': errors('Internal fault', [Msg.internal]),
    },
  }
  const cancel = {
    operationId: 'cancelVerification',
    tags: ['Verifications'],
    summary: 'Withdraw a verification',
    description:
      'A pending or locked verification becomes `canceled` (verify then answers 404); canceling a canceled one answers the same 200. ' +
      'The body may be empty (whatever its Content-Type) or a JSON object, which is ignored. The credit is not refunded.',
    security: apiSecurity,
    parameters: [idempotencyParam],
    requestBody: { required: false, content: { 'application/json': { schema: ref('CancelBody'), example: {} } } },
    responses: {
      '200': response(
        'Canceled',
        ref('CancelResponse'),
        { success: true, verification_id: VERIFICATION_ID, status: 'canceled', request_id: REQUEST_ID },
        { replay: true },
      ),
      '400': errors('A body that is not empty nor a JSON object, or a bad Idempotency-Key', [
        Msg.contentType,
        Msg.invalidJson,
        Msg.notObject,
        Msg.idempotencyKey,
      ]),
      ...auth,
      '403': errors('The API key is disabled', [Msg.keyDisabled]),
      '404': errors('No such verification for this key', [Msg.verificationNotFound, Msg.notFound], { replay: true }),
      ...methodNotAllowed,
      ...idempotencyErrors([M.AlreadyFinalMessage]),
      '413': errors('Body over 16 KiB', [Msg.bodyTooLarge]),
      '429': errors('Per-key rate limit', [keyLimited], { retry: true }),
      '500': errors('Internal fault', [Msg.internal], { replay: true }),
    },
  }
  const receipts = {
    operationId: 'postDeliveryReceipt',
    tags: ['Receipts'],
    summary: "A vendor's delivery receipt",
    description:
      "Only with `server.public_url` set. `{provider}` is the provider's name in the config. No API key: the vendor's signature " +
      '(Twilio `X-Twilio-Signature`; Vonage `sig` with the signature secret, SHA-256 HMAC; the webhook provider `X-Otpd-Signature`). ' +
      'A receipt for an unknown message, or with a status that changes nothing, is 200. `delivered` and `undelivered` are final.',
    security: [],
    parameters: [
      { name: 'provider', in: 'path', required: true, description: "the provider's name in the config (`[providers.NAME]`)", schema: { type: 'string' } },
    ],
    requestBody: {
      required: true,
      content: {
        'application/x-www-form-urlencoded': {
          schema: { type: 'object', additionalProperties: { type: 'string' }, description: "Twilio's status callback, or Vonage's delivery receipt" },
          example: { MessageSid: 'SM0123', MessageStatus: 'delivered' },
        },
        'application/json': {
          schema: { anyOf: [ref('WebhookReceipt'), { type: 'object', description: "Vonage's delivery receipt (POST-JSON)" }] },
          example: { verification_id: VERIFICATION_ID, status: 'delivered' },
        },
      },
    },
    responses: {
      '200': response('Taken (or ignored: unknown message, a status that changes nothing)', ref('ReceiptResponse'), { success: true, request_id: REQUEST_ID }),
      '400': errors("Signed, but the webhook provider's body is not a JSON object", [Msg.invalidJson, Msg.notObject]),
      '403': errors('A missing or wrong signature: nothing changes', [Msg.invalidSignature]),
      '404': errors('Receipts are off, or no provider with receipts has this name', [Msg.notFound]),
      ...methodNotAllowed,
      '413': errors('Body over 16 KiB', [Msg.bodyTooLarge]),
      '500': errors('Internal fault', [Msg.internal]),
    },
  }
  const noAuth: never[] = []
  const opsTags = ['Operations']
  return {
    openapi: '3.1.0',
    info: {
      title: 'otpd',
      version,
      description:
        'Send one-time codes by SMS, email or voice and verify them. Every response is JSON with a `request_id` (also in `X-Request-Id`). ' +
        "An unknown path answers 404 and another method on a known path 405. The contract's `{base_url}` is the server URL below followed by `/api/v1`." +
        TEST_RECIPIENTS,
      license: { name: 'Proprietary', identifier: 'LicenseRef-otpd' },
    },
    servers: [
      {
        url: '{origin}',
        description: 'otpd: scheme, host and port',
        variables: {
          origin: { default: 'http://127.0.0.1:8080', description: 'where otpd listens (server.listen), or its public address (server.public_url)' },
        },
      },
    ],
    tags: [
      { name: 'Verifications', description: 'Send, verify, read and cancel verifications (API key required).' },
      { name: 'Receipts', description: 'Delivery receipts from SMS vendors, signed by the vendor.' },
      { name: 'Operations', description: 'Health, readiness, metrics and this document.' },
      CONSOLE_TAG,
    ],
    paths: {
      '/api/v1/send': { post: send },
      '/api/v1/verify': { post: verify },
      '/api/v1/verifications/{verification_id}': { parameters: [verificationIdParam], get: status },
      '/api/v1/verifications/{verification_id}/cancel': { parameters: [verificationIdParam], post: cancel },
      '/api/v1/receipts/{provider}': { post: receipts },
      '/healthz': {
        get: {
          operationId: 'health',
          tags: opsTags,
          summary: 'The process is up',
          security: noAuth,
          responses: { '200': response('Up', ref('HealthResponse'), { status: 'ok', request_id: REQUEST_ID }), '404': notFound, ...methodNotAllowed },
        },
      },
      '/readyz': {
        get: {
          operationId: 'ready',
          tags: opsTags,
          summary: 'Database writable, migrations applied, delivery configuration valid',
          security: noAuth,
          responses: {
            '200': response('Ready', ref('ReadyResponse'), {
              status: 'ready',
              checks: { database: 'ok', migrations: 'ok', delivery: 'ok' },
              request_id: REQUEST_ID,
            }),
            '404': notFound,
            ...methodNotAllowed,
            '503': response('A check failed; `error` names it (details in the server log)', ref('NotReadyResponse'), {
              status: 'not ready',
              error: 'Not ready: database',
              checks: { database: 'failed', migrations: 'ok', delivery: 'ok' },
              request_id: REQUEST_ID,
            }),
          },
        },
      },
      '/metrics': {
        get: {
          operationId: 'metrics',
          tags: opsTags,
          summary: 'Prometheus metrics (on the main listener only when server.metrics_token is set; otherwise 404)',
          security: [{ metricsToken: [] }],
          responses: {
            '200': { description: 'Prometheus text format 0.0.4', content: { 'text/plain': { schema: { type: 'string' }, example: 'otpd_up 1\n' } } },
            '401': errors('No metrics token, or a wrong one', [Msg.metricsTokenRequired, Msg.metricsTokenInvalid]),
            '404': notFound,
            ...methodNotAllowed,
          },
        },
      },
      '/api/v1/openapi.json': {
        get: {
          operationId: 'openapi',
          tags: opsTags,
          summary: 'This document',
          security: noAuth,
          responses: {
            '200': { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object' }, example: { openapi: '3.1.0' } } } },
            '404': notFound,
            ...methodNotAllowed,
          },
        },
      },
      ...consolePaths(),
    },
    components: {
      schemas: { ...Object.fromEntries(Object.entries(SCHEMAS).map(([k, v]) => [k, plain(v)])), ...consoleSchemas() },
      responses: {
        NotFound: errors('Unknown path', [Msg.notFound]),
        MethodNotAllowed: errors('Known path, another method', [Msg.methodNotAllowed]),
      },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Makes a retry safe: the first request runs, later ones with the same key and body get its stored answer (with `Idempotent-Replayed: true`). ' +
            'Scoped to the API key, method and path; kept `idempotency.retention_hours` (default 24).',
          schema: plain(M.IdempotencyKey),
          example: 'order-1234-attempt',
        },
        VerificationId: {
          name: 'verification_id',
          in: 'path',
          required: true,
          description: 'the id send answered',
          schema: { type: 'string' },
          example: VERIFICATION_ID,
        },
      },
      headers: {
        RequestId: { description: 'The request id, as in the body', required: true, schema: { type: 'string' } },
        RetryAfter: { description: 'Seconds to wait, as `retry_after` in the body', required: true, schema: { type: 'integer', minimum: 1 } },
        IdempotentReplayed: {
          description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key',
          schema: { type: 'string', enum: ['true'] },
        },
      },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'The API key as `Authorization: Bearer <key>` (recommended; wins over x-api-key).' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The API key as `x-api-key: <key>`.' },
        metricsToken: { type: 'http', scheme: 'bearer', description: '`server.metrics_token`, for /metrics on the main listener.' },
        ...CONSOLE_SECURITY_SCHEMES,
      },
    },
  }
}
