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
  voiceTooLongMessage,
} from './error-texts.ts'
import type { SendOutcome, SendService } from '../otp/send.ts'
import type { SendInput } from '../otp/types.ts'
import { admit, counted, keyLimitedReply, type AdmissionDeps } from './admission.ts'
import { idempotencyReply, idempotentRequest, isIdempotencyOutcome } from './idempotency.ts'
import { errorReply, render, respond, type Reply } from './reply.ts'
import { noteOf, requestIdOf } from './request-log.ts'
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
    case 'voice_too_long':
      return errorReply(400, voiceTooLongMessage(outcome.max))
    case 'custom_text_refused':
      return errorReply(400, Msg.customTextRefused)
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

/** Seconds a send refused by the ceiling is told to wait: sends in flight end within the delivery budget, most far sooner. */
export const OVERLOAD_RETRY_AFTER = 1

/** Seconds a send refused by the outbox's ceiling is told to wait: the count is read again each second, and an outbox drains slower than sends end. */
export const EVENTS_QUEUED_RETRY_AFTER = 5

export function sendRoute(deps: AdmissionDeps & { send: SendService; logger: Logger; maxSendsInFlight: number; outboxFull(): boolean }) {
  // This node's sends under way, from the request's start to its answer (docs/api.md#overload).
  let inFlight = 0
  return new Elysia({ name: 'send-route' }).post(
    '/api/v1/send',
    async ({ request }) => {
      // First, before the key or the body: a refusal here reads, charges and counts nothing, and memory stays bounded.
      if (inFlight >= deps.maxSendsInFlight) {
        deps.send.overloaded()
        noteOf(request).outcome = 'overloaded'
        return render(errorReply(503, Msg.overloaded, OVERLOAD_RETRY_AFTER), requestIdOf(request))
      }
      // A cached count (events/queued.ts), not a read: the ceiling costs a send nothing.
      if (deps.outboxFull()) {
        noteOf(request).outcome = 'events_queued'
        return render(errorReply(503, Msg.eventsQueued, EVENTS_QUEUED_RETRY_AFTER), requestIdOf(request))
      }
      inFlight++
      try {
        // A wave of sends gives way to other requests (otp/send.ts, giveWay).
        const wait = deps.send.giveWay()
        if (wait) await wait
        return await sendOnce(deps, request)
      } finally {
        inFlight--
      }
    },
    { parse: 'none' },
  )
}

function sendOnce(deps: AdmissionDeps & { send: SendService; logger: Logger }, request: Request): Promise<Response> {
  return respond(deps.logger, request, Msg.sendFailed, async (requestId) => {
    const a = await admit(deps, request, { idempotent: true })
    if (!a.ok) return a.reply
    const note = noteOf(request)
    if (typeof a.body.recipient === 'string') note.recipient = maskRecipient(a.body.recipient)
    const input = validateSend(a.body, deps.send.resolveLocale, deps.send.resolveAuto)
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
  })
}

/** Request examples; the OpenAPI test checks each against its request schema. */
export const SEND_EXAMPLES = {
  sms: { summary: 'SMS with a generated code', value: { channel: 'sms', recipient: '+14155550123' } },
  email: {
    summary: 'Email with template, subject and expiry',
    value: { channel: 'email', recipient: 'ann@example.com', message: 'Your code for Example: {code}', subject: 'Your Example code', expires_in: 600 },
  },
  custom_code: { summary: 'Voice with your own code', value: { channel: 'voice', recipient: '+14155550123', code: '4821' } },
  whatsapp: { summary: 'WhatsApp in Brazilian Portuguese', value: { channel: 'whatsapp', recipient: '+5511987654321', locale: 'pt-BR' } },
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
  auto: { summary: "The operator's workflow for the number's country ([[routing]])", value: { channel: 'auto', recipient: '+919812345678' } },
  workflow: {
    summary: 'WhatsApp first, then SMS after 45 seconds or at once if WhatsApp fails, then email',
    value: {
      recipient: '+919812345678',
      workflow: [{ channel: 'whatsapp' }, { channel: 'sms' }, { channel: 'email', recipient: 'ann@example.com' }],
      channel_timeout: 45,
    },
  },
}
/** The route's operation in the OpenAPI document (app/openapi.ts assembles it). */
export const sendOperation = {
  operationId: 'sendCode',
  tags: ['Verifications'],
  summary: 'Create a verification and deliver its code',
  description:
    'Costs one credit unless the recipient is a test recipient; a failed delivery is refunded. With `workflow`, each started step costs one credit, and a step whose delivery fails is refunded.' +
    TEST_RECIPIENTS,
  security: apiSecurity,
  parameters: [idempotencyParam],
  requestBody: {
    required: true,
    content: {
      'application/json': {
        // `channel` or `workflow`, never both: a body with both matches two branches, which oneOf refuses.
        schema: { oneOf: [ref('ChannelSendBody'), ref('WorkflowSendBody')] },
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
      Msg.channelAndWorkflow,
      Msg.workflow,
      M.WorkflowStepMessage,
      Msg.channelTimeout,
      Msg.channelTimeoutAlone,
      Msg.autoUnrouted,
      M.SmsTooLongMessage,
      M.VoiceTooLongMessage,
      Msg.customTextRefused,
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
    '503': errors(
      'This node has `delivery.max_sends_in_flight` sends under way, or the event outbox holds `events.max_queued` deliveries: refused at once, nothing charged, counted or stored; retry after `Retry-After`',
      [Msg.overloaded, Msg.eventsQueued],
      {
        retry: true,
      },
    ),
  },
}
