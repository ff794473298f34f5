/**
 * Runs a route body and renders its Reply. A fault becomes the route's generic
 * 500; its cause goes to the log with the request id, never to the client.
 */
import type { Logger } from '../lib/logger.ts'
import { errorReply, render, type Reply } from './reply.ts'
import { requestIdOf } from './request-log.ts'

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
