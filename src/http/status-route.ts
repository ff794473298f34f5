/**
 * GET /api/v1/verifications/{verification_id} (docs/api.md#verification-status): what
 * became of a verification. Another key's verification is not found. Reading
 * is not an attempt and changes nothing of the verification; the request
 * counts toward the per-key limit like any other.
 */
import { Elysia } from 'elysia'
import type { Logger } from '../lib/logger.ts'
import type { StepRow } from '../otp/ports/index.ts'
import type { StatusOutcome, StatusService } from '../otp/status.ts'
import type { Verification } from '../otp/types.ts'
import { authenticate, keyLimitedReply, type AdmissionDeps } from './admission.ts'
import { Msg } from './error-texts.ts'
import { errorReply, respond, type Reply } from './reply.ts'
import { noteOf } from './request-log.ts'
import * as M from './models.ts'
import { apiSecurity, AT, errors, keyAuth, methodNotAllowed, ref, REQUEST_ID, response, VERIFICATION_ID } from './openapi-parts.ts'

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

/**
 * An SMS adds its encoding and segments as sent (docs/messages.md#encoding-and-segments);
 * WhatsApp its template language, and an undelivered message the vendor's
 * error (docs/api.md#verification-status).
 */
function deliveryOf(v: Verification): Record<string, unknown> {
  const d: Record<string, unknown> = { status: v.delivery, provider: v.deliveryProvider, updated_at: iso(v.deliveryUpdatedAt) }
  if (v.sms) Object.assign(d, { encoding: v.sms.encoding, segments: v.sms.segments })
  if (v.deliveryLanguage) d.language = v.deliveryLanguage
  if (v.deliveryError) d.error = { code: v.deliveryError.code, title: v.deliveryError.title }
  return d
}

/**
 * A workflow's steps (docs/api.md#workflows): the current one (the last
 * started) shows the verification's own delivery; one that ended keeps what
 * its delivery came to.
 */
function workflowOf(v: Verification, steps: StepRow[]): Record<string, unknown> {
  const current = steps.findLastIndex((s) => s.startedAt !== null)
  return {
    current_step: current,
    channel_timeout: steps[0]!.channelTimeout,
    steps: steps.map((s, i) => {
      const live = i === current && s.endedAt === null
      return {
        channel: s.channel,
        recipient: s.recipientMask,
        provider: live ? v.deliveryProvider : s.provider,
        delivery: live ? v.delivery : s.delivery,
        started_at: iso(s.startedAt),
        due_at: iso(s.dueAt),
        ended_at: iso(s.endedAt),
        ended_reason: s.endReason,
      }
    }),
  }
}

export function statusReply(outcome: StatusOutcome): Reply {
  switch (outcome.kind) {
    case 'key_limited':
      return keyLimitedReply(outcome.max, outcome.retryAfter)
    case 'not_found':
      return errorReply(404, Msg.verificationNotFound)
    case 'found': {
      const v = outcome.verification
      return {
        status: 200,
        body: {
          success: true,
          verification_id: v.id,
          channel: v.channel,
          recipient: v.recipientMask,
          status: outcome.status,
          created_at: iso(v.createdAt),
          expires_at: iso(v.expiresAt),
          failed_attempts: outcome.failedAttempts,
          // Test recipients deliver nothing.
          delivery: v.delivery === null ? null : deliveryOf(v),
          ...(outcome.steps.length === 0 ? {} : workflowOf(v, outcome.steps)),
        },
      }
    }
  }
}

export function statusRoute(deps: AdmissionDeps & { status: StatusService; logger: Logger }) {
  return new Elysia({ name: 'status-route' }).get('/api/v1/verifications/:id', ({ request, params }) =>
    respond(deps.logger, request, Msg.internal, async () => {
      const a = await authenticate(deps, request)
      if (!a.ok) return a.reply
      // Elysia gives null for a malformed percent-encoding: no id, so not found.
      const outcome = await deps.status.status(a.key, (params.id as string | null) ?? '')
      const note = noteOf(request)
      note.outcome = outcome.kind
      if (outcome.kind === 'key_limited') deps.metrics.rateLimited('key')
      if (outcome.kind === 'found') note.channel = outcome.verification.channel
      return statusReply(outcome)
    }),
  )
}

/** The route's operation in the OpenAPI document (app/openapi.ts assembles it). */
export const statusOperation = {
  operationId: 'getVerification',
  tags: ['Verifications'],
  summary: 'What became of a verification',
  description: 'Reading a status is not an attempt and changes nothing.',
  security: apiSecurity,
  responses: {
    '200': response('The verification', ref('StatusResponse'), {
      success: true,
      verification_id: VERIFICATION_ID,
      channel: 'sms',
      recipient: '+1415****123',
      status: 'pending',
      created_at: '2026-01-01T12:00:00.000Z',
      expires_at: AT,
      failed_attempts: 0,
      delivery: { status: 'delivered', provider: 'twilio_main', updated_at: '2026-01-01T12:00:04.000Z' },
      request_id: REQUEST_ID,
    }),
    ...keyAuth,
    '403': errors('The API key is disabled', [Msg.keyDisabled]),
    '404': errors('No such verification for this key', [Msg.verificationNotFound, Msg.notFound]),
    ...methodNotAllowed,
    '429': errors('Per-key rate limit', [M.KeyRateLimitMessage], { retry: true }),
    '500': errors('Internal fault', [Msg.internal]),
  },
}
