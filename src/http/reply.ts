/**
 * The one place that turns outcomes into HTTP: status codes, error bodies,
 * `request_id`, `X-Request-Id` and `Retry-After` (docs/api.md#errors),
 * the verbatim replay of an answer stored for an Idempotency-Key, and `respond`,
 * which runs a route body: a fault becomes the route's generic 500, its cause
 * logged with the request id, never sent to the client.
 */
import type { Logger } from '../lib/logger.ts'
import type { StoredAnswer } from '../otp/ports/index.ts'
import { requestIdOf } from './request-log.ts'

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

export async function respond(logger: Logger, request: Request, fallback: string, run: (requestId: string) => Promise<Reply | Response>): Promise<Response> {
  const requestId = requestIdOf(request)
  try {
    const out = await run(requestId)
    // A Response is a stored answer replayed as it is (reply.ts renderReplay).
    return out instanceof Response ? out : render(out, requestId)
  } catch (err) {
    // The cause in the message, so the logger's repeat limit (one line per 10 s) holds back the same fault only;
    // the stack is for debugging, at debug level.
    const cause = err instanceof Error ? err.message : String(err)
    logger.error(`request failed: ${cause.split('\n')[0]}`, { request_id: requestId, error: cause })
    if (err instanceof Error && err.stack) logger.debug('request failed: stack', { request_id: requestId, stack: err.stack })
    return render(errorReply(500, fallback), requestId)
  }
}
