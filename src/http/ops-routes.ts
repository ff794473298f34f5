/**
 * Operator endpoints: GET /healthz (the process answers), GET /readyz (it can
 * do its work), GET /metrics and GET /api/v1/openapi.json. None takes an API
 * key or counts toward the per-key limit.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { Elysia } from 'elysia'
import type { Logger } from '../lib/logger.ts'
import { PROMETHEUS_CONTENT_TYPE } from '../lib/prometheus.ts'
import { Msg, notReadyMessage } from './error-texts.ts'
import { errorReply, render, REQUEST_ID_HEADER } from './reply.ts'
import { requestIdOf } from './request-log.ts'
import { errors, methodNotAllowed, notFound, ref, REQUEST_ID, response } from './openapi-parts.ts'
import type { ServiceMetrics } from './service-metrics.ts'

export const READY_CHECKS = ['database', 'migrations', 'delivery'] as const
export type ReadyCheck = (typeof READY_CHECKS)[number]
/** Each check's problem, or null when it passed. */
export type Readiness = Record<ReadyCheck, string | null>

export interface OpsDeps {
  readiness(): Promise<Readiness>
  metrics: ServiceMetrics
  logger: Logger
  /** Each provider's circuit by provider name (docs/delivery.md#circuit-breaking), for the admin listener's /readyz. */
  providerCircuits?(): Record<string, 'closed' | 'open' | 'half_open'>
}

/**
 * `detail`: the body adds `providers`, each provider's circuit. Only on the
 * admin listener: the main listener's body is public and names checks only.
 */
export function healthRoutes(deps: OpsDeps, opts: { detail?: boolean } = {}) {
  let lastProblem = ''
  return new Elysia({ name: 'health-routes' })
    .get('/healthz', ({ request }) => render({ status: 200, body: { status: 'ok' } }, requestIdOf(request)))
    .get('/readyz', async ({ request }) => {
      const requestId = requestIdOf(request)
      const result = await deps.readiness()
      const failing = READY_CHECKS.filter((c) => result[c] !== null)
      const checks = Object.fromEntries(READY_CHECKS.map((c) => [c, result[c] === null ? 'ok' : 'failed']))
      // The body is public: it names the failing checks; the details go to the log,
      // once per change rather than once per probe.
      const problem = failing.map((c) => `${c}: ${result[c]}`).join('; ')
      if (problem !== lastProblem) {
        if (problem) deps.logger.warn('not ready', { request_id: requestId, problems: problem })
        else deps.logger.info('ready again', { request_id: requestId })
        lastProblem = problem
      }
      // An open circuit is not unreadiness: the node still verifies, and sends go to the other providers.
      const detail = opts.detail && deps.providerCircuits ? { providers: deps.providerCircuits() } : {}
      if (failing.length === 0) return render({ status: 200, body: { status: 'ready', checks, ...detail } }, requestId)
      return render({ status: 503, body: { status: 'not ready', error: notReadyMessage(failing), checks, ...detail } }, requestId)
    })
}

const digest = (s: string) => createHash('sha256').update(s).digest()

/** Compares digests, so neither the token's content nor its length shows in the timing. */
export function tokenMatches(presented: string, token: string): boolean {
  return timingSafeEqual(digest(presented), digest(token))
}

/**
 * GET /metrics. With `token`, the request needs `Authorization: Bearer <token>`
 * (401 otherwise, with `WWW-Authenticate`); without it (the admin listener) it is open.
 */
export function metricsRoute(deps: OpsDeps, token?: string) {
  return new Elysia({ name: 'metrics-route' }).get('/metrics', async ({ request }) => {
    const requestId = requestIdOf(request)
    if (token !== undefined) {
      const presented = /^\s*bearer\s+(\S+)\s*$/i.exec(request.headers.get('authorization') ?? '')?.[1]
      if (presented === undefined || !tokenMatches(presented, token)) {
        const res = render(errorReply(401, presented === undefined ? Msg.metricsTokenRequired : Msg.metricsTokenInvalid), requestId)
        res.headers.set('www-authenticate', 'Bearer realm="otpd metrics"')
        return res
      }
    }
    const text = await deps.metrics.render((name, err) =>
      deps.logger.error('metric collection failed', { request_id: requestId, metric: name, error: err instanceof Error ? err.message : String(err) }),
    )
    return new Response(text, { status: 200, headers: { 'content-type': PROMETHEUS_CONTENT_TYPE, [REQUEST_ID_HEADER]: requestId } })
  })
}

export function openapiRoute(document: Record<string, unknown>) {
  const text = JSON.stringify(document)
  return new Elysia({ name: 'openapi-route' }).get(
    '/api/v1/openapi.json',
    ({ request }) =>
      new Response(text, { status: 200, headers: { 'content-type': 'application/json; charset=utf-8', [REQUEST_ID_HEADER]: requestIdOf(request) } }),
  )
}

const OPS_TAGS = ['Operations']
const NO_AUTH: never[] = []

/** The operations' GETs in the OpenAPI document (app/openapi.ts assembles it). */
export const healthOperation = {
  operationId: 'health',
  tags: OPS_TAGS,
  summary: 'The process is up',
  security: NO_AUTH,
  responses: { '200': response('Up', ref('HealthResponse'), { status: 'ok', request_id: REQUEST_ID }), '404': notFound, ...methodNotAllowed },
}

export const readyOperation = {
  operationId: 'ready',
  tags: OPS_TAGS,
  summary: 'Database writable, migrations applied, delivery configuration valid',
  security: NO_AUTH,
  responses: {
    '200': response('Ready', ref('ReadyResponse'), {
      status: 'ready',
      checks: { database: 'ok', migrations: 'ok', delivery: 'ok' },
      request_id: REQUEST_ID,
    }),
    '404': notFound,
    ...methodNotAllowed,
    '503': response('A check failed; `error` names it (details in the server log)', ref('NotReadyResponse'), {
      status: 'not ready',
      error: 'Not ready: database',
      checks: { database: 'failed', migrations: 'ok', delivery: 'ok' },
      request_id: REQUEST_ID,
    }),
  },
}

export const metricsOperation = {
  operationId: 'metrics',
  tags: OPS_TAGS,
  summary: 'Prometheus metrics (on the main listener only when server.metrics_token is set; otherwise 404)',
  security: [{ metricsToken: [] }],
  responses: {
    '200': { description: 'Prometheus text format 0.0.4', content: { 'text/plain': { schema: { type: 'string' }, example: 'otpd_up 1\n' } } },
    '401': errors('No metrics token, or a wrong one', [Msg.metricsTokenRequired, Msg.metricsTokenInvalid]),
    '404': notFound,
    ...methodNotAllowed,
  },
}

export const openapiOperation = {
  operationId: 'openapi',
  tags: OPS_TAGS,
  summary: 'This document',
  security: NO_AUTH,
  responses: {
    '200': { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object' }, example: { openapi: '3.1.0' } } } },
    '404': notFound,
    ...methodNotAllowed,
  },
}
