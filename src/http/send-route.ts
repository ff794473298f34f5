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
} from './messages.ts'
import type { SendOutcome, SendService } from '../otp/send.ts'
import type { SendInput } from '../otp/types.ts'
import { admit, counted, keyLimitedReply, type GuardDeps } from './guard.ts'
import { idempotencyReply, idempotentRequest, isIdempotencyOutcome } from './idempotency.ts'
import { errorReply, type Reply } from './reply.ts'
import { noteOf } from './request-log.ts'
import { respond } from './respond.ts'
import type { ServiceMetrics } from './service-metrics.ts'
import { validateSend } from './validate.ts'

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
function countSend(metrics: ServiceMetrics, input: SendInput, outcome: SendOutcome): void {
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

export function sendRoute(deps: GuardDeps & { send: SendService; logger: Logger }) {
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
