/**
 * The API document's own parts that no one route owns (app/openapi.ts
 * assembles them with each route's operation): its info, server and tags,
 * and the components the operations refer to. TypeBox schemas are JSON
 * Schema; `plain` drops their symbol keys and turns a union of constants into
 * an `enum`, which generators read as a fixed value set.
 */
import type { TSchema } from '@sinclair/typebox'
import { Msg } from './error-texts.ts'
import * as M from './models.ts'
import { errors, type Json, plain, ref, TEST_RECIPIENTS, VERIFICATION_ID } from './openapi-parts.ts'

const API_SCHEMAS: Record<string, TSchema> = {
  SmsSendBody: M.SmsSendBody,
  VoiceSendBody: M.VoiceSendBody,
  WhatsappSendBody: M.WhatsappSendBody,
  EmailSendBody: M.EmailSendBody,
  WorkflowSendBody: M.WorkflowSendBody,
  AutoSendBody: M.AutoSendBody,
  VerifyBody: M.VerifyBody,
  CancelBody: M.CancelBody,
  WebhookReceipt: M.WebhookReceipt,
  SendResponse: M.SendResponse,
  VerifyResponse: M.VerifyResponse,
  LockoutResponse: M.LockoutResponse,
  StatusResponse: M.StatusResponse,
  CancelResponse: M.CancelResponse,
  NextResponse: M.NextResponse,
  ReceiptResponse: M.ReceiptResponse,
  ErrorResponse: M.ErrorResponse,
  HealthResponse: M.HealthResponse,
  ReadyResponse: M.ReadyResponse,
  NotReadyResponse: M.NotReadyResponse,
}

/** A send with `channel`: one body per channel, told apart by it (a generated client narrows on it). */
const CHANNEL_SEND_BODY: Json = {
  oneOf: ['SmsSendBody', 'VoiceSendBody', 'WhatsappSendBody', 'EmailSendBody', 'AutoSendBody'].map(ref),
  discriminator: {
    propertyName: 'channel',
    mapping: {
      sms: '#/components/schemas/SmsSendBody',
      voice: '#/components/schemas/VoiceSendBody',
      whatsapp: '#/components/schemas/WhatsappSendBody',
      email: '#/components/schemas/EmailSendBody',
      auto: '#/components/schemas/AutoSendBody',
    },
  },
}

/** The schemas the operations refer to, as plain JSON Schema. */
export function apiSchemas(): Record<string, Json> {
  return { ...Object.fromEntries(Object.entries(API_SCHEMAS).map(([k, v]) => [k, plain(v)])), ChannelSendBody: CHANNEL_SEND_BODY }
}

/** The document's info, without its version (the running one). */
export const API_INFO = {
  title: 'otpd',
  description:
    'Send one-time codes by SMS, email or voice and verify them. Every response is JSON with a `request_id` (also in `X-Request-Id`). ' +
    "An unknown path answers 404 and another method on a known path 405. The contract's `{base_url}` is the server URL below followed by `/api/v1`." +
    TEST_RECIPIENTS,
  license: { name: 'Proprietary', identifier: 'LicenseRef-otpd' },
}

export const API_SERVERS = [
  {
    url: '{origin}',
    description: 'otpd: scheme, host and port',
    variables: {
      origin: { default: 'http://127.0.0.1:8080', description: 'where otpd listens (server.listen), or its public address (server.public_url)' },
    },
  },
]

export const API_TAGS = [
  { name: 'Verifications', description: 'Send, verify, read and cancel verifications (API key required).' },
  { name: 'Receipts', description: 'Delivery receipts from SMS vendors, signed by the vendor.' },
  { name: 'Operations', description: 'Health, readiness, metrics and this document.' },
]

export const API_RESPONSES = {
  NotFound: errors('Unknown path', [Msg.notFound]),
  MethodNotAllowed: errors('Known path, another method', [Msg.methodNotAllowed]),
}

export const API_PARAMETERS = {
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
}

export const API_HEADERS = {
  RequestId: { description: 'The request id, as in the body', required: true, schema: { type: 'string' } },
  RetryAfter: { description: 'Seconds to wait, as `retry_after` in the body', required: true, schema: { type: 'integer', minimum: 1 } },
  IdempotentReplayed: {
    description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
}

export const API_SECURITY_SCHEMES = {
  bearerAuth: { type: 'http', scheme: 'bearer', description: 'The API key as `Authorization: Bearer <key>` (recommended; wins over x-api-key).' },
  apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The API key as `x-api-key: <key>`.' },
  metricsToken: { type: 'http', scheme: 'bearer', description: '`server.metrics_token`, for /metrics on the main listener.' },
}
