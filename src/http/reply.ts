/**
 * The one place that turns outcomes into HTTP: status codes, error bodies,
 * `request_id`, `X-Request-Id` and `Retry-After` (DECISIONS.md section 9).
 */
export interface Reply {
  status: number
  body: Record<string, unknown>
  retryAfter?: number
}

export const REQUEST_ID_HEADER = 'x-request-id'

export function errorReply(status: number, error: string, retryAfter?: number): Reply {
  return retryAfter === undefined ? { status, body: { error } } : { status, body: { error }, retryAfter }
}

export function render(reply: Reply, requestId: string): Response {
  const body: Record<string, unknown> = { ...reply.body, request_id: requestId }
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', [REQUEST_ID_HEADER]: requestId }
  if (reply.retryAfter !== undefined) {
    body.retry_after = reply.retryAfter
    headers['retry-after'] = String(reply.retryAfter)
  }
  return new Response(JSON.stringify(body), { status: reply.status, headers })
}
