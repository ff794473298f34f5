/**
 * POST /api/v1/verifications/{verification_id}/next (docs/api.md#workflows):
 * a workflow's next step, now. Keyed as cancel is, with an optional
 * Idempotency-Key; the body may be empty or a JSON object, which is ignored
 * (verification-action.ts).
 */
import type { Logger } from '../lib/logger.ts'
import type { NextOutcome, NextService } from '../otp/next.ts'
import { keyLimitedReply, type AdmissionDeps } from './admission.ts'
import { alreadyEndedMessage, Msg } from './error-texts.ts'
import { errorReply, type Reply } from './reply.ts'
import * as M from './models.ts'
import { ref, REQUEST_ID, response, VERIFICATION_ID } from './openapi-parts.ts'
import { verificationActionOperation, verificationActionRoute } from './verification-action.ts'

export function nextReply(outcome: NextOutcome): Reply {
  switch (outcome.kind) {
    case 'key_limited':
      return keyLimitedReply(outcome.max, outcome.retryAfter)
    case 'not_found':
      return errorReply(404, Msg.verificationNotFound)
    case 'started':
      return { status: 200, body: { success: true, verification_id: outcome.verificationId, current_step: outcome.step, channel: outcome.channel } }
    case 'no_next':
      return errorReply(409, Msg.noNextStep)
    case 'final':
      return errorReply(409, alreadyEndedMessage(outcome.status))
  }
}

export function nextRoute(deps: AdmissionDeps & { next: NextService; logger: Logger }) {
  return verificationActionRoute(deps, { name: 'next', run: (key, id, idem) => deps.next.next(key, id, idem), reply: nextReply })
}

export const nextOperation = verificationActionOperation({
  operationId: 'nextStep',
  summary: "Start a workflow's next step now",
  description:
    'Ends the current step of a workflow send (`requested`) and starts the next one that may start, which costs one credit; the answer follows its delivery. ' +
    'The body may be empty (whatever its Content-Type) or a JSON object, which is ignored.',
  ok: response(
    'The next step started',
    ref('NextResponse'),
    { success: true, verification_id: VERIFICATION_ID, current_step: 1, channel: 'sms', request_id: REQUEST_ID },
    { replay: true },
  ),
  conflicts: [M.NoNextMessage],
})
