/**
 * POST /api/v1/verifications/{verification_id}/cancel (docs/api.md#cancel),
 * with an optional Idempotency-Key (docs/api.md#idempotency-keys). The body may be empty,
 * whatever its Content-Type; otherwise it must be a JSON object (then
 * ignored), with the usual 400s for anything else (verification-action.ts).
 */
import type { Logger } from '../lib/logger.ts'
import type { CancelOutcome, CancelService } from '../otp/cancel.ts'
import { keyLimitedReply, type AdmissionDeps } from './admission.ts'
import { alreadyEndedMessage, Msg } from './error-texts.ts'
import { errorReply, type Reply } from './reply.ts'
import * as M from './models.ts'
import { ref, REQUEST_ID, response, VERIFICATION_ID } from './openapi-parts.ts'
import { verificationActionOperation, verificationActionRoute } from './verification-action.ts'

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

export function cancelRoute(deps: AdmissionDeps & { cancel: CancelService; logger: Logger }) {
  return verificationActionRoute(deps, { name: 'cancel', run: (key, id, idem) => deps.cancel.cancel(key, id, idem), reply: cancelReply })
}

export const cancelOperation = verificationActionOperation({
  operationId: 'cancelVerification',
  summary: 'Withdraw a verification',
  description:
    'A pending or locked verification becomes `canceled` (verify then answers 404); canceling a canceled one answers the same 200. ' +
    'The body may be empty (whatever its Content-Type) or a JSON object, which is ignored. The credit is not refunded.',
  ok: response(
    'Canceled',
    ref('CancelResponse'),
    { success: true, verification_id: VERIFICATION_ID, status: 'canceled', request_id: REQUEST_ID },
    { replay: true },
  ),
  conflicts: [M.AlreadyFinalMessage],
})
