/**
 * Runs a route body and renders its Reply. A fault becomes the route's generic
 * 500; its cause goes to the log with the request id, never to the client.
 */
import type { Logger } from '../lib/logger.ts'
import { errorReply, render, REQUEST_ID_HEADER, type Reply } from './reply.ts'

type HeaderSet = { headers: Record<string, string | number | undefined> | Headers }

export function requestIdOf(set: HeaderSet): string {
  const h = set.headers
  return String(h instanceof Headers ? h.get(REQUEST_ID_HEADER) : h[REQUEST_ID_HEADER])
}

export async function respond(logger: Logger, set: HeaderSet, fallback: string, run: (requestId: string) => Promise<Reply>): Promise<Response> {
  const requestId = requestIdOf(set)
  try {
    return render(await run(requestId), requestId)
  } catch (err) {
    logger.error('request failed', { request_id: requestId, error: err instanceof Error ? (err.stack ?? err.message) : String(err) })
    return render(errorReply(500, fallback), requestId)
  }
}
