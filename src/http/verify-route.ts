/** POST /api/v1/verify (docs/api.md#verify-a-code), with an optional Idempotency-Key (docs/api.md#idempotency-keys). */
import { Elysia } from 'elysia'
import type { Logger } from '../lib/logger.ts'
import { lockoutMessage, Msg } from './error-texts.ts'
import type { VerifyOutcome, VerifyService } from '../otp/verify.ts'
import { admit, counted, keyLimitedReply, type AdmissionDeps } from './admission.ts'
import { idempotencyReply, idempotentRequest, isIdempotencyOutcome } from './idempotency.ts'
import { errorReply, respond, type Reply } from './reply.ts'
import { noteOf } from './request-log.ts'
import { validateVerify } from './validate.ts'
import * as M from './models.ts'
import {
  apiSecurity,
  bodyErrors,
  errors,
  errorSchema,
  idempotencyErrors,
  idempotencyParam,
  keyAuth,
  methodNotAllowed,
  ref,
  replayHeader,
  REQUEST_ID,
  response,
  retryHeaders,
  sample,
  VERIFICATION_ID,
} from './openapi-parts.ts'

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

export function verifyRoute(deps: AdmissionDeps & { verify: VerifyService; lockoutSeconds: number; logger: Logger }) {
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
        if (outcome.kind === 'verified' && outcome.step) deps.metrics.workflowApproval(outcome.step.step, outcome.step.channel)
        if (outcome.kind === 'locked') deps.metrics.rateLimited(outcome.cause === 'attempts' ? 'lockout' : 'recipient_failures')
        return reply(outcome)
      }),
    { parse: 'none' },
  )
}

export const VERIFY_EXAMPLES = {
  verify: { summary: 'Check a code', value: { verification_id: VERIFICATION_ID, code: '123456' } },
}

/** The route's operation in the OpenAPI document (app/openapi.ts assembles it). */
export const verifyOperation = {
  operationId: 'verifyCode',
  tags: ['Verifications'],
  summary: 'Check a code',
  description: 'Status 200 means processed: read `verified`.',
  security: apiSecurity,
  parameters: [idempotencyParam],
  requestBody: { required: true, content: { 'application/json': { schema: ref('VerifyBody'), examples: VERIFY_EXAMPLES } } },
  responses: {
    '200': response(
      'Processed; `verified` tells whether the code was right',
      ref('VerifyResponse'),
      { success: true, verified: true, message: Msg.verified, request_id: REQUEST_ID },
      { replay: true },
    ),
    '400': errors('Bad body, field or Idempotency-Key', [...bodyErrors, Msg.verificationIdRequired, Msg.codeRequired, Msg.code, Msg.idempotencyKey]),
    ...keyAuth,
    '403': errors('The API key is disabled', [Msg.keyDisabled]),
    '404': errors('No such verification for this key (or it was canceled, or its delivery failed)', [Msg.verificationNotFound], { replay: true }),
    ...methodNotAllowed,
    ...idempotencyErrors(),
    '413': errors('Body over 16 KiB', [Msg.bodyTooLarge]),
    '429': {
      description: 'Per-key rate limit (error body), or the verification is locked after too many wrong codes (verify-shaped body)',
      headers: { ...retryHeaders, ...replayHeader },
      content: {
        'application/json': {
          schema: { oneOf: [errorSchema([M.KeyRateLimitMessage], true), ref('LockoutResponse')] },
          examples: {
            lockout: {
              summary: 'Locked after too many wrong codes',
              value: { success: true, verified: false, message: sample(M.LockoutMessage), request_id: REQUEST_ID, retry_after: 900 },
            },
            key_limited: { summary: 'Per-key rate limit', value: { error: sample(M.KeyRateLimitMessage), request_id: REQUEST_ID, retry_after: 12 } },
          },
        },
      },
    },
    '500': errors('Internal fault', [Msg.internal], { replay: true }),
  },
}
