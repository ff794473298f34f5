/**
 * POST /api/v1/verifications/{verification_id}/next (docs/api.md#workflows):
 * a workflow's next step, now. Keyed as cancel is, with an optional
 * Idempotency-Key; the body may be empty or a JSON object, which is ignored.
 */
import { Elysia } from 'elysia'
import type { Logger } from '../lib/logger.ts'
import type { NextOutcome, NextService } from '../otp/next.ts'
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
  return new Elysia({ name: 'next-route' }).post(
    '/api/v1/verifications/:id/next',
    ({ request, params }) =>
      respond(deps.logger, request, Msg.internal, async (requestId) => {
        const a = await admit(deps, request, { idempotent: true, readBody: readOptionalJsonBody })
        if (!a.ok) return a.reply
        // Elysia gives null for a malformed percent-encoding: no id, so not found.
        const id = (params.id as string | null) ?? ''
        const outcome = await deps.next.next(
          a.key,
          id,
          idempotentRequest(request, `/api/v1/verifications/${id}/next`, a.key, a.idempotencyKey, a.body, requestId, nextReply),
        )
        noteOf(request).outcome = outcome.kind
        if (isIdempotencyOutcome(outcome)) return idempotencyReply(outcome)
        if (outcome.kind === 'key_limited') deps.metrics.rateLimited('key')
        return nextReply(outcome)
      }),
    { parse: 'none' },
  )
}

/** The route's operation in the OpenAPI document (app/openapi.ts assembles it). */
export const nextOperation = {
  operationId: 'nextStep',
  tags: ['Verifications'],
  summary: "Start a workflow's next step now",
  description:
    'Ends the current step of a workflow send (`requested`) and starts the next one that may start, which costs one credit; the answer follows its delivery. ' +
    'The body may be empty (whatever its Content-Type) or a JSON object, which is ignored.',
  security: apiSecurity,
  parameters: [idempotencyParam],
  requestBody: { required: false, content: { 'application/json': { schema: ref('CancelBody'), example: {} } } },
  responses: {
    '200': response(
      'The next step started',
      ref('NextResponse'),
      { success: true, verification_id: VERIFICATION_ID, current_step: 1, channel: 'sms', request_id: REQUEST_ID },
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
    ...idempotencyErrors([M.NoNextMessage]),
    '413': errors('Body over 16 KiB', [Msg.bodyTooLarge]),
    '429': errors('Per-key rate limit', [M.KeyRateLimitMessage], { retry: true }),
    '500': errors('Internal fault', [Msg.internal], { replay: true }),
  },
}
