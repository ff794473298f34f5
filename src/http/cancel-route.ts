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
import { admit, keyLimitedReply, type AdmissionDeps } from './admission.ts'
import { idempotencyReply, idempotentRequest, isIdempotencyOutcome } from './idempotency.ts'
import { alreadyEndedMessage, Msg } from './error-texts.ts'
import { errorReply, respond, type Reply } from './reply.ts'
import { noteOf } from './request-log.ts'
import * as M from './models.ts'
import {
  apiSecurity,
  errors,
  idempotencyErrors,
  idempotencyParam,
  keyAuth,
  methodNotAllowed,
  ref,
  REQUEST_ID,
  response,
  VERIFICATION_ID,
} from './openapi-parts.ts'

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

/** The route's operation in the OpenAPI document (app/openapi.ts assembles it). */
export const cancelOperation = {
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
    ...keyAuth,
    '403': errors('The API key is disabled', [Msg.keyDisabled]),
    '404': errors('No such verification for this key', [Msg.verificationNotFound, Msg.notFound], { replay: true }),
    ...methodNotAllowed,
    ...idempotencyErrors([M.AlreadyFinalMessage]),
    '413': errors('Body over 16 KiB', [Msg.bodyTooLarge]),
    '429': errors('Per-key rate limit', [M.KeyRateLimitMessage], { retry: true }),
    '500': errors('Internal fault', [Msg.internal], { replay: true }),
  },
}
