/**
 * A key's action on one verification, POST /api/v1/verifications/{verification_id}/<action>
 * (cancel, next): what both routes share. The same key rules, an optional
 * Idempotency-Key (docs/api.md#idempotency-keys) scoped to the decoded id's
 * path, a body that may be empty whatever its Content-Type or else must be a
 * JSON object (then ignored), and the same OpenAPI answers but for the 200
 * and the 409s. Each action keeps its service call, its outcomes' replies and
 * its words.
 */
import { Elysia } from 'elysia'
import type { Logger } from '../lib/logger.ts'
import type { IdempotencyOutcome, IdempotentRequest } from '../otp/idempotency.ts'
import type { ApiKey } from '../otp/types.ts'
import { readOptionalJsonBody } from './body.ts'
import { admit, type AdmissionDeps } from './admission.ts'
import { idempotencyReply, idempotentRequest, isIdempotencyOutcome } from './idempotency.ts'
import { Msg } from './error-texts.ts'
import { respond, type Reply } from './reply.ts'
import { noteOf } from './request-log.ts'
import * as M from './models.ts'
import { apiSecurity, errors, idempotencyErrors, idempotencyParam, keyAuth, type Message, methodNotAllowed, ref, type response } from './openapi-parts.ts'

/** One action: the path's last segment, the service call and how its own outcomes are answered. */
export interface VerificationAction<O extends { kind: string }> {
  readonly name: string
  readonly run: (key: ApiKey, id: string, idem: IdempotentRequest<O> | undefined) => Promise<O | IdempotencyOutcome>
  readonly reply: (outcome: O) => Reply
}

export function verificationActionRoute<O extends { kind: string }>(deps: AdmissionDeps & { logger: Logger }, action: VerificationAction<O>) {
  return new Elysia({ name: `${action.name}-route` }).post(
    `/api/v1/verifications/:id/${action.name}`,
    ({ request, params }) =>
      respond(deps.logger, request, Msg.internal, async (requestId) => {
        const a = await admit(deps, request, { idempotent: true, readBody: readOptionalJsonBody })
        if (!a.ok) return a.reply
        // Elysia gives null for a malformed percent-encoding: no id, so not found.
        const id = (params.id as string | null) ?? ''
        const path = `/api/v1/verifications/${id}/${action.name}`
        const outcome = await action.run(a.key, id, idempotentRequest(request, path, a.key, a.idempotencyKey, a.body, requestId, action.reply))
        noteOf(request).outcome = outcome.kind
        if (isIdempotencyOutcome(outcome)) return idempotencyReply(outcome)
        if (outcome.kind === 'key_limited') deps.metrics.rateLimited('key')
        return action.reply(outcome)
      }),
    { parse: 'none' },
  )
}

/** An action's own part of its OpenAPI operation. */
export interface ActionDoc {
  operationId: string
  summary: string
  description: string
  /** The 200 answer. */
  ok: ReturnType<typeof response>
  /** The messages of a 409 beside a running Idempotency-Key's. */
  conflicts: Message[]
}

/** The route's operation in the OpenAPI document (app/openapi.ts assembles it). */
export function verificationActionOperation(doc: ActionDoc) {
  return {
    operationId: doc.operationId,
    tags: ['Verifications'],
    summary: doc.summary,
    description: doc.description,
    security: apiSecurity,
    parameters: [idempotencyParam],
    requestBody: { required: false, content: { 'application/json': { schema: ref('CancelBody'), example: {} } } },
    responses: {
      '200': doc.ok,
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
      ...idempotencyErrors(doc.conflicts),
      '413': errors('Body over 16 KiB', [Msg.bodyTooLarge]),
      '429': errors('Per-key rate limit', [M.KeyRateLimitMessage], { retry: true }),
      '500': errors('Internal fault', [Msg.internal], { replay: true }),
    },
  }
}
