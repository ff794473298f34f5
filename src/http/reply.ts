/**
 * The one place that turns outcomes into HTTP: status codes, error bodies,
 * `request_id`, `X-Request-Id` and `Retry-After` (docs/api.md#errors),
 * and the verbatim replay of an answer stored for an Idempotency-Key.
 */
import type { StoredAnswer } from '../otp/ports/index.ts'

export interface Reply {
  status: number
  body: Record<string, unknown>
  retryAfter?: number
}

export const REQUEST_ID_HEADER = 'x-request-id'
export const REPLAYED_HEADER = 'idempotent-replayed'
const JSON_TYPE = 'application/json; charset=utf-8'

export function errorReply(status: number, error: string, retryAfter?: number): Reply {
  return retryAfter === undefined ? { status, body: { error } } : { status, body: { error }, retryAfter }
}

export function render(reply: Reply, requestId: string): Response {
  const headers: Record<string, string> = { 'content-type': JSON_TYPE, [REQUEST_ID_HEADER]: requestId }
  if (reply.retryAfter !== undefined) headers['retry-after'] = String(reply.retryAfter)
  return new Response(bodyText(reply, requestId), { status: reply.status, headers })
}

function bodyText(reply: Reply, requestId: string): string {
  const body: Record<string, unknown> = { ...reply.body, request_id: requestId }
  if (reply.retryAfter !== undefined) body.retry_after = reply.retryAfter
  return JSON.stringify(body)
}

/** What render() answers, kept to be replayed for an Idempotency-Key. */
export function storedAnswer(reply: Reply, requestId: string): StoredAnswer {
  return { status: reply.status, body: bodyText(reply, requestId) }
}

/**
 * A stored answer, verbatim: its status and body text, `X-Request-Id` = the
 * stored `request_id`, `Retry-After` = its `retry_after` if it has one, and
 * `Idempotent-Replayed: true`.
 */
export function renderReplay(answer: StoredAnswer): Response {
  const body = JSON.parse(answer.body) as { request_id?: unknown; retry_after?: unknown }
  const headers: Record<string, string> = { 'content-type': JSON_TYPE, [REQUEST_ID_HEADER]: String(body.request_id), [REPLAYED_HEADER]: 'true' }
  if (typeof body.retry_after === 'number') headers['retry-after'] = String(body.retry_after)
  return new Response(answer.body, { status: answer.status, headers })
}
