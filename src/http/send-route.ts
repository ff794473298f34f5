/** POST /api/v1/send (docs/api.md#send-a-code), with an optional Idempotency-Key (docs/api.md#idempotency-keys). */
import { Elysia } from 'elysia'
import type { Logger } from '../lib/logger.ts'
import { maskRecipient } from '../lib/mask.ts'
import {
  countryNotAllowedMessage,
  dailyCreditLimitMessage,
  ipRateLimitMessage,
  Msg,
  pumpingBlockedMessage,
  recipientFailureCapMessage,
  recipientRateLimitMessage,
  smsTooLongMessage,
} from './error-texts.ts'
import type { SendOutcome, SendService } from '../otp/send.ts'
import type { SendInput } from '../otp/types.ts'
import { admit, counted, keyLimitedReply, type AdmissionDeps } from './admission.ts'
import { idempotencyReply, idempotentRequest, isIdempotencyOutcome } from './idempotency.ts'
import { errorReply, respond, type Reply } from './reply.ts'
import { noteOf } from './request-log.ts'
import type { ServiceMetrics } from './service-metrics.ts'
import { validateSend } from './validate.ts'
import * as M from './models.ts'
import {
  apiSecurity,
  AT,
  bodyErrors,
  errors,
  idempotencyErrors,
  idempotencyParam,
  keyAuth,
  methodNotAllowed,
  notFound,
  ref,
  REQUEST_ID,
  response,
  TEST_RECIPIENTS,
  VERIFICATION_ID,
} from './openapi-parts.ts'

export function sendReply(outcome: SendOutcome): Reply {
  switch (outcome.kind) {
    case 'key_limited':
      return keyLimitedReply(outcome.max, outcome.retryAfter)
    case 'sent':
      return {
        status: 200,
        body: { success: true, verification_id: outcome.verificationId, expires_at: new Date(outcome.expiresAt).toISOString() },
      }
    case 'recipient_limited':
      return errorReply(429, recipientRateLimitMessage(outcome.max, outcome.period, outcome.retryAfter), outcome.retryAfter)
    case 'recipient_capped':
      return errorReply(429, recipientFailureCapMessage(outcome.retryAfter), outcome.retryAfter)
    case 'no_credits':
      return errorReply(402, Msg.insufficientCredits)
    case 'delivery_failed':
      return errorReply(500, Msg.sendFailed)
    case 'fraud_blocked':
      return fraudReply(outcome)
    case 'too_long':
      return errorReply(400, smsTooLongMessage(outcome.max))
  }
}

/** docs/api.md#fraud-guard: 403 for geo, 429 with Retry-After for the others. */
function fraudReply(o: Extract<SendOutcome, { kind: 'fraud_blocked' }>): Reply {
  const wait = o.retryAfter ?? 1
  switch (o.rule) {
    case 'geo':
      return errorReply(403, countryNotAllowedMessage(o.country ?? 'ZZ'))
    case 'ip':
      return errorReply(429, ipRateLimitMessage(o.max ?? 0, wait), wait)
    case 'new_country':
    case 'conversion':
      return errorReply(429, pumpingBlockedMessage(wait), wait)
    case 'daily_credit':
      return errorReply(429, dailyCreditLimitMessage(o.max ?? 0, wait), wait)
  }
}

/**
 * Sends that reached delivery are counted where the provider is known (the
 * delivery wrapper in app/delivery.ts); the others here.
 */
export function countSend(metrics: ServiceMetrics, input: SendInput, outcome: SendOutcome): void {
  if (outcome.kind === 'key_limited') {
    metrics.rateLimited('key')
  } else if (outcome.kind === 'recipient_limited') {
    metrics.rateLimited('recipient')
    metrics.send(input.channel, 'none', 'rate_limited')
  } else if (outcome.kind === 'recipient_capped') {
    // The kind verify's cap lockout counts under: one series per rule, whichever endpoint it refused.
    metrics.rateLimited('recipient_failures')
    metrics.send(input.channel, 'none', 'rate_limited')
  } else if (outcome.kind === 'fraud_blocked') {
    metrics.send(input.channel, 'none', 'fraud_blocked')
  } else if (outcome.kind === 'no_credits') {
    metrics.send(input.channel, 'none', 'no_credits')
  } else if (outcome.kind === 'sent' && outcome.test) {
    metrics.send(input.channel, 'none', 'test')
  }
}

export function sendRoute(deps: AdmissionDeps & { send: SendService; logger: Logger }) {
  return new Elysia({ name: 'send-route' }).post(
    '/api/v1/send',
    ({ request }) =>
      respond(deps.logger, request, Msg.sendFailed, async (requestId) => {
        const a = await admit(deps, request, { idempotent: true })
        if (!a.ok) return a.reply
        const note = noteOf(request)
        if (typeof a.body.recipient === 'string') note.recipient = maskRecipient(a.body.recipient)
        const input = validateSend(a.body, deps.send.resolveLocale)
        if (!input.ok) return counted(deps, a.key, errorReply(400, input.error))
        note.channel = input.value.channel
        const outcome = await deps.send.send(
          a.key,
          input.value,
          requestId,
          idempotentRequest(request, '/api/v1/send', a.key, a.idempotencyKey, a.body, requestId, sendReply),
        )
        if (isIdempotencyOutcome(outcome)) {
          note.outcome = outcome.kind
          return idempotencyReply(outcome)
        }
        // The log says what the metrics say: a test recipient's send is `test`, not `sent`.
        note.outcome = outcome.kind === 'sent' && outcome.test ? 'test' : outcome.kind
        countSend(deps.metrics, input.value, outcome)
        return sendReply(outcome)
      }),
    { parse: 'none' },
  )
}

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
/** The route's operation in the OpenAPI document (app/openapi.ts assembles it). */
export const sendOperation = {
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
    ...keyAuth,
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
      [
        M.RecipientRateLimitMessage,
        M.KeyRateLimitMessage,
        M.RecipientFailureCapMessage,
        M.IpRateLimitMessage,
        M.PumpingBlockedMessage,
        M.DailyCreditLimitMessage,
      ],
      { retry: true, replay: true },
    ),
    '500': errors('Delivery failed (the credit is refunded) or an internal fault', [Msg.sendFailed], { replay: true }),
  },
}
