/** POST /api/v1/verify (docs/api.md#verify-a-code), with an optional Idempotency-Key (docs/api.md#idempotency-keys). */
import { Elysia } from 'elysia'
import type { Logger } from '../lib/logger.ts'
import { lockoutMessage, Msg } from './messages.ts'
import type { VerifyOutcome, VerifyService } from '../otp/verify.ts'
import { admit, counted, keyLimitedReply, type GuardDeps } from './guard.ts'
import { idempotencyReply, idempotentRequest, isIdempotencyOutcome } from './idempotency.ts'
import { errorReply, type Reply } from './reply.ts'
import { noteOf } from './request-log.ts'
import { respond } from './respond.ts'
import { validateVerify } from './validate.ts'

const result = (verified: boolean, message: string): Reply => ({ status: 200, body: { success: true, verified, message } })

export function verifyReply(outcome: VerifyOutcome, lockoutSeconds: number): Reply {
  switch (outcome.kind) {
    case 'key_limited':
      return keyLimitedReply(outcome.max, outcome.retryAfter)
    case 'verified':
      return result(true, Msg.verified)
    case 'invalid_code':
      return result(false, Msg.invalidCode)
    case 'expired':
      return result(false, Msg.expired)
    case 'already_used':
      return result(false, Msg.alreadyUsed)
    case 'not_found':
      return errorReply(404, Msg.verificationNotFound)
    case 'locked':
      // The lockout body has the verify shape, not the error shape (docs/api.md#errors).
      return { status: 429, body: { success: true, verified: false, message: lockoutMessage(lockoutSeconds) }, retryAfter: outcome.retryAfter }
  }
}

export function verifyRoute(deps: GuardDeps & { verify: VerifyService; lockoutSeconds: number; logger: Logger }) {
  return new Elysia({ name: 'verify-route' }).post(
    '/api/v1/verify',
    ({ request }) =>
      respond(deps.logger, request, Msg.internal, async (requestId) => {
        const a = await admit(deps, request, { idempotent: true })
        if (!a.ok) return a.reply
        const input = validateVerify(a.body)
        if (!input.ok) return counted(deps, a.key, errorReply(400, input.error))
        const reply = (o: VerifyOutcome) => verifyReply(o, deps.lockoutSeconds)
        const outcome = await deps.verify.verify(
          a.key,
          input.value,
          idempotentRequest(request, '/api/v1/verify', a.key, a.idempotencyKey, a.body, requestId, reply),
        )
        noteOf(request).outcome = outcome.kind
        if (isIdempotencyOutcome(outcome)) return idempotencyReply(outcome)
        if (outcome.kind === 'key_limited') deps.metrics.rateLimited('key')
        else deps.metrics.verify(outcome.kind)
        if (outcome.kind === 'locked') deps.metrics.rateLimited(outcome.cause === 'attempts' ? 'lockout' : 'recipient_failures')
        return reply(outcome)
      }),
    { parse: 'none' },
  )
}
