/**
 * The HTTP application: request ids, the two routes, and JSON answers for
 * everything else (404 unknown path, 405 wrong method, 500 fault).
 */
import { Elysia } from 'elysia'
import type { Logger } from '../lib/logger.ts'
import { randomUuid } from '../lib/random.ts'
import type { SendService } from '../otp/send.ts'
import type { VerifyService } from '../otp/verify.ts'
import { Msg } from '../otp/messages.ts'
import type { GuardDeps } from './guard.ts'
import { errorReply, render, REQUEST_ID_HEADER } from './reply.ts'
import { requestIdOf } from './respond.ts'
import { sendRoute } from './send-route.ts'
import { verifyRoute } from './verify-route.ts'

export interface HttpDeps extends GuardDeps {
  send: SendService
  verify: VerifyService
  logger: Logger
  lockoutSeconds: number
}

const ROUTES = ['/api/v1/send', '/api/v1/verify']

/**
 * Options for Bun.serve. Bun's own body cap answers a bare, non-JSON 413 before
 * authentication, so it is set out of the way: the handler rejects by
 * Content-Length without reading, and stops reading a chunked body at 16 KiB
 * (body.ts), so nothing large is ever buffered.
 */
export const LISTEN_OPTIONS = { maxRequestBodySize: 2 ** 40, reusePort: false }

export function createHttpApp(deps: HttpDeps) {
  const app = new Elysia()
    .onRequest(({ set }) => {
      set.headers[REQUEST_ID_HEADER] = randomUuid()
    })
    .onError(({ code, error, set }) => {
      const requestId = requestIdOf(set)
      if (code === 'NOT_FOUND') return render(errorReply(404, Msg.notFound), requestId)
      deps.logger.error('unhandled error', { request_id: requestId, code: String(code), error: error instanceof Error ? error.message : String(error) })
      return render(errorReply(500, Msg.internal), requestId)
    })
    .use(sendRoute(deps))
    .use(verifyRoute(deps))
  for (const path of ROUTES) {
    app.all(path, ({ set }) => render(errorReply(405, Msg.methodNotAllowed), requestIdOf(set)), { parse: 'none' })
  }
  return app
}

export type HttpApp = ReturnType<typeof createHttpApp>
