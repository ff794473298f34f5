/**
 * The Idempotency-Key header on send, verify and cancel (docs/api.md#idempotency-keys),
 * as HTTP sees it: the header's rules, the scope (API key,
 * method, path), the canonical body, how a decided outcome is stored (the
 * exact response) and what a used key answers. The rules themselves are the
 * domain's (otp/idempotency.ts).
 */
import { canonicalJson } from '../lib/canonical-json.ts'
import type { IdempotencyOutcome, IdempotentRequest } from '../otp/idempotency.ts'
import type { ApiKey } from '../otp/types.ts'
import { Msg } from './error-texts.ts'
import { errorReply, renderReplay, storedAnswer, type Reply } from './reply.ts'

export const IDEMPOTENCY_HEADER = 'idempotency-key'
/** 1-255 visible ASCII characters (0x21-0x7E). */
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/

/** The header's key, null when absent; not ok when present but not of the documented shape. */
export function idempotencyKeyOf(headers: Headers): { ok: true; key: string | null } | { ok: false } {
  const value = headers.get(IDEMPOTENCY_HEADER)
  if (value === null) return { ok: true, key: null }
  return KEY_SHAPE.test(value) ? { ok: true, key: value } : { ok: false }
}

/**
 * The domain's view of a request with a key, or undefined without one.
 * `path` is the route's path in one spelling (the decoded verification id of
 * a cancel, no trailing slash): `/api/v1/send/` or a percent-encoded id is
 * the same scope.
 */
export function idempotentRequest<O>(
  request: Request,
  path: string,
  apiKey: ApiKey,
  key: string | null,
  body: Record<string, unknown>,
  requestId: string,
  reply: (outcome: O) => Reply,
): IdempotentRequest<O> | undefined {
  if (key === null) return undefined
  return {
    scope: { keyId: apiKey.id, method: request.method, path, key },
    canonicalBody: canonicalJson(body),
    answer: (outcome) => storedAnswer(reply(outcome), requestId),
  }
}

/** What a used key answers: the stored response verbatim, or the 422 / 409. */
export function idempotencyReply(outcome: IdempotencyOutcome): Reply | Response {
  switch (outcome.kind) {
    case 'replay':
      return renderReplay(outcome.answer)
    case 'idempotency_conflict':
      return errorReply(422, Msg.idempotencyConflict)
    case 'idempotency_in_progress':
      return errorReply(409, Msg.idempotencyInProgress)
  }
}

/** Whether an outcome is a used key's answer rather than the operation's own. */
export function isIdempotencyOutcome(o: { kind: string }): o is IdempotencyOutcome {
  return o.kind === 'replay' || o.kind === 'idempotency_conflict' || o.kind === 'idempotency_in_progress'
}
