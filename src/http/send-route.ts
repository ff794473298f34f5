/** POST /api/v1/send (spec 4.1). */
import { Elysia } from 'elysia'
import type { Logger } from '../lib/logger.ts'
import { Msg, recipientRateLimitMessage } from '../otp/messages.ts'
import type { SendOutcome, SendService } from '../otp/send.ts'
import { admit, counted, keyLimitedReply, type GuardDeps } from './guard.ts'
import { errorReply, type Reply } from './reply.ts'
import { respond } from './respond.ts'
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
    case 'no_credits':
      return errorReply(402, Msg.insufficientCredits)
    case 'delivery_failed':
      return errorReply(500, Msg.sendFailed)
  }
}

export function sendRoute(deps: GuardDeps & { send: SendService; logger: Logger }) {
  return new Elysia({ name: 'send-route' }).post(
    '/api/v1/send',
    ({ request, set }) =>
      respond(deps.logger, set, Msg.sendFailed, async (requestId) => {
        const a = await admit(deps, request)
        if (!a.ok) return a.reply
        const input = validateSend(a.body)
        if (!input.ok) return counted(deps, a.key, errorReply(400, input.error))
        return sendReply(await deps.send.send(a.key, input.value, requestId))
      }),
    { parse: 'none' },
  )
}
