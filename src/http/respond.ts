/**
 * Runs a route body and renders its Reply. A fault becomes the route's generic
 * 500; its cause goes to the log with the request id, never to the client.
 */
import type { Logger } from '../lib/logger.ts'
import { errorReply, render, type Reply } from './reply.ts'
import { requestIdOf } from './request-log.ts'

export async function respond(logger: Logger, request: Request, fallback: string, run: (requestId: string) => Promise<Reply>): Promise<Response> {
  const requestId = requestIdOf(request)
  try {
    return render(await run(requestId), requestId)
  } catch (err) {
    logger.error('request failed', { request_id: requestId, error: err instanceof Error ? (err.stack ?? err.message) : String(err) })
    return render(errorReply(500, fallback), requestId)
  }
}
