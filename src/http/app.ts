/**
 * The HTTP applications. The main one: request ids, the API routes, the
 * operator endpoints, and JSON answers for everything else (404 unknown path,
 * 405 wrong method, 500 fault). The admin one (`server.admin_listen`): the
 * operator endpoints alone, /metrics without a token, answering only to its
 * own host names (admin-hosts.ts). Both log one line per request
 * (request-log.ts).
 */
import { type AnyElysia, Elysia } from 'elysia'
import type { Logger } from '../lib/logger.ts'
import type { CancelService } from '../otp/cancel.ts'
import type { NextService } from '../otp/next.ts'
import type { SendService } from '../otp/send.ts'
import type { StatusService } from '../otp/status.ts'
import type { VerifyService } from '../otp/verify.ts'
import { hostAllowed, hostNameOf } from './admin-hosts.ts'
import { hostNotAllowedMessage, Msg } from './error-texts.ts'
import type { AdmissionDeps } from './admission.ts'
import { healthRoutes, metricsRoute, openapiRoute, type OpsDeps } from './ops-routes.ts'
import { errorReply, render } from './reply.ts'
import { receiptsRoute, type ReceiptRouteDeps } from './receipts-route.ts'
import { finishRequest, requestIdOf, startNote, type RequestLogDeps } from './request-log.ts'
import { cancelRoute } from './cancel-route.ts'
import { nextRoute } from './next-route.ts'
import { hooksRoute, type HookRouteDeps } from './hooks-route.ts'
import { sendRoute } from './send-route.ts'
import { statusRoute } from './status-route.ts'
import { verifyRoute } from './verify-route.ts'

export interface HttpDeps extends AdmissionDeps, OpsDeps, ReceiptRouteDeps {
  send: SendService
  verify: VerifyService
  status: StatusService
  cancel: CancelService
  /** A workflow's next step (docs/api.md#workflows). */
  next: NextService
  logger: Logger
  lockoutSeconds: number
  /** `delivery.max_sends_in_flight`: past it a send answers 503 at once (docs/api.md#overload); a reload updates it. */
  maxSendsInFlight: number
  /** Whether the event outbox is at `[events] max_queued` (a cached count): a send answers 503 at once (docs/api.md#overload). */
  outboxFull(): boolean
  /** The OpenAPI document served at /api/v1/openapi.json. */
  openapi: Record<string, unknown>
  /** POST /hooks/NAME (docs/integrations.md). */
  hookRoute: HookRouteDeps
  /** When set, /metrics on this listener answers to `Authorization: Bearer <token>`; otherwise it is an unknown path. */
  metricsToken?: string
}

/**
 * Options for Bun.serve. Bun's own body cap answers a bare, non-JSON 413 before
 * authentication, so it is set out of the way: the handler rejects by
 * Content-Length without reading, and stops reading a chunked body at 16 KiB
 * (body.ts), so nothing large is ever buffered.
 */
export const LISTEN_OPTIONS = { maxRequestBodySize: 2 ** 40, reusePort: false }

/** Request ids, 404/500 as JSON, and the request log line with its metrics sample. */
function base(log: RequestLogDeps) {
  return new Elysia()
    .onRequest(({ request }) => startNote(request))
    .onError(({ code, error, request }) => {
      const requestId = requestIdOf(request)
      if (code === 'NOT_FOUND') {
        // mapResponse does not run for an unmatched path: finish the request here.
        finishRequest(log, request, undefined, 404)
        return render(errorReply(404, Msg.notFound), requestId)
      }
      log.logger.error('unhandled error', { request_id: requestId, code: String(code), error: error instanceof Error ? error.message : String(error) })
      return render(errorReply(500, Msg.internal), requestId)
    })
    .mapResponse(({ request, responseValue, route }) => {
      const status = responseValue instanceof Response ? responseValue.status : 500
      finishRequest(log, request, route, status)
    })
}

function methodNotAllowed(app: Elysia, paths: string[]) {
  for (const path of paths) {
    app.all(path, ({ request }) => render(errorReply(405, Msg.methodNotAllowed), requestIdOf(request)), { parse: 'none' })
  }
}

export function createHttpApp(deps: HttpDeps) {
  const app = base({ logger: deps.logger, metrics: deps.metrics, count: true })
    .use(sendRoute(deps))
    .use(verifyRoute(deps))
    .use(statusRoute(deps))
    .use(cancelRoute(deps))
    .use(nextRoute(deps))
    .use(receiptsRoute(deps))
    .use(hooksRoute(deps.hookRoute))
    .use(healthRoutes(deps))
    .use(openapiRoute(deps.openapi))
  const ops = ['/healthz', '/readyz', '/api/v1/openapi.json']
  if (deps.metricsToken !== undefined) {
    app.use(metricsRoute(deps, deps.metricsToken))
    ops.push('/metrics')
  }
  const api = [
    '/api/v1/send',
    '/api/v1/verify',
    '/api/v1/verifications/:id',
    '/api/v1/verifications/:id/cancel',
    '/api/v1/verifications/:id/next',
    '/api/v1/receipts/:provider',
  ]
  methodNotAllowed(app as unknown as Elysia, [...api, ...ops])
  return app
}

export type HttpApp = ReturnType<typeof createHttpApp>

/**
 * The admin listener: health, readiness and /metrics without a token, and
 * the operator console when it is on (`console`: console/plugin.ts). Its
 * own requests are logged, not counted.
 */
export function createAdminApp(deps: OpsDeps & { allowedHosts: ReadonlySet<string> }, console?: AnyElysia) {
  const log = { logger: deps.logger, metrics: deps.metrics, count: false }
  const app = base(log)
    .onRequest(({ request }) => {
      const name = hostNameOf(request)
      if (hostAllowed(name, deps.allowedHosts)) return
      finishRequest(log, request, undefined, 421)
      return render(errorReply(421, hostNotAllowedMessage(name)), requestIdOf(request))
    })
    .use(healthRoutes(deps, { detail: true }))
    .use(metricsRoute(deps))
  if (console !== undefined) app.use(console)
  methodNotAllowed(app as unknown as Elysia, ['/healthz', '/readyz', '/metrics'])
  return app
}

export type AdminApp = ReturnType<typeof createAdminApp>
