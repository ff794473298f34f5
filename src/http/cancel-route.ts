/**
 * POST /api/v1/verifications/{verification_id}/cancel (docs/api.md#cancel),
 * with an optional Idempotency-Key (docs/api.md#idempotency-keys). The body may be empty,
 * whatever its Content-Type; otherwise it must be a JSON object (then
 * ignored), with the usual 400s for anything else.
 */
import { Elysia } from 'elysia'
import type { Logger } from '../lib/logger.ts'
import type { CancelOutcome, CancelService } from '../otp/cancel.ts'
import { readOptionalJsonBody } from './body.ts'
import { admit, keyLimitedReply, type GuardDeps } from './guard.ts'
import { idempotencyReply, idempotentRequest, isIdempotencyOutcome } from './idempotency.ts'
import { alreadyEndedMessage, Msg } from './messages.ts'
import { errorReply, type Reply } from './reply.ts'
import { noteOf } from './request-log.ts'
import { respond } from './respond.ts'

export function cancelReply(outcome: CancelOutcome): Reply {
  switch (outcome.kind) {
    case 'key_limited':
      return keyLimitedReply(outcome.max, outcome.retryAfter)
    case 'not_found':
      return errorReply(404, Msg.verificationNotFound)
    case 'canceled':
      return { status: 200, body: { success: true, verification_id: outcome.verificationId, status: 'canceled' } }
    case 'final':
      return errorReply(409, alreadyEndedMessage(outcome.status))
  }
}

export function cancelRoute(deps: GuardDeps & { cancel: CancelService; logger: Logger }) {
  return new Elysia({ name: 'cancel-route' }).post(
    '/api/v1/verifications/:id/cancel',
    ({ request, params }) =>
      respond(deps.logger, request, Msg.internal, async (requestId) => {
        const a = await admit(deps, request, { idempotent: true, readBody: readOptionalJsonBody })
        if (!a.ok) return a.reply
        // Elysia gives null for a malformed percent-encoding: no id, so not found.
        const id = (params.id as string | null) ?? ''
        const outcome = await deps.cancel.cancel(
          a.key,
          id,
          idempotentRequest(request, `/api/v1/verifications/${id}/cancel`, a.key, a.idempotencyKey, a.body, requestId, cancelReply),
        )
        noteOf(request).outcome = outcome.kind
        if (isIdempotencyOutcome(outcome)) return idempotencyReply(outcome)
        if (outcome.kind === 'key_limited') deps.metrics.rateLimited('key')
        return cancelReply(outcome)
      }),
    { parse: 'none' },
  )
}
