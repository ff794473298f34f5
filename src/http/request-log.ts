/**
 * One log line and one metrics sample per request. Routes add what they learn
 * (key prefix, masked recipient, outcome) to the request's note; the line is
 * written when the response is ready. Only safe values enter a note: the
 * 8-character display prefix of a well-formed key, never the key; a masked
 * recipient, never the clear one; no code. The raw path is not logged (a
 * client could put anything in it): the matched route is.
 */
import type { Logger } from '../lib/logger.ts'
import { randomUuid } from '../lib/random.ts'
import type { ServiceMetrics } from './service-metrics.ts'

export interface RequestNote {
  started: number
  /** The request's id: `request_id` in the body, `X-Request-Id`, every log line about it. */
  requestId: string
  keyPrefix?: string
  /** The `[hooks.NAME]` a hook request came to (never its recipient: docs/integrations.md#safe-by-default). */
  hook?: string
  recipient?: string
  channel?: string
  outcome?: string
  done?: boolean
}

const notes = new WeakMap<Request, RequestNote>()

export function startNote(request: Request): void {
  notes.set(request, { started: performance.now(), requestId: randomUuid() })
}

/** The note of a request being handled (a detached one if the request was never started). */
export function noteOf(request: Request): RequestNote {
  let n = notes.get(request)
  if (!n) {
    n = { started: performance.now(), requestId: randomUuid() }
    notes.set(request, n)
  }
  return n
}

/**
 * The request's id. It lives in the note, not in Elysia's `set.headers`, which
 * would merge headers into every Response (docs/benchmarks.md#small-costs-on-the-request-path);
 * render() writes the header.
 */
export function requestIdOf(request: Request): string {
  return noteOf(request).requestId
}

/** Health probes and scrapes arrive every few seconds: logged at debug while they succeed. */
const QUIET_ROUTES = new Set(['/healthz', '/readyz', '/metrics'])

export interface RequestLogDeps {
  logger: Logger
  metrics: ServiceMetrics
  /** Counted in otpd_http_requests_total (the admin listener's own requests are not). */
  count: boolean
}

export function finishRequest(deps: RequestLogDeps, request: Request, route: string | undefined, status: number): void {
  const note = noteOf(request)
  if (note.done) return
  note.done = true
  const seconds = (performance.now() - note.started) / 1000
  const routeLabel = route ?? 'unmatched'
  if (deps.count) deps.metrics.request(routeLabel, status, seconds)
  const fields: Record<string, unknown> = {
    request_id: note.requestId,
    method: request.method,
    route: routeLabel,
    status,
    duration_ms: Math.round(seconds * 100_000) / 100,
  }
  if (note.keyPrefix) fields.key_prefix = note.keyPrefix
  if (note.hook) fields.hook = note.hook
  if (note.channel) fields.channel = note.channel
  if (note.recipient) fields.recipient = note.recipient
  if (note.outcome) fields.outcome = note.outcome
  if (status >= 500) deps.logger.warn('request', fields)
  else if (QUIET_ROUTES.has(routeLabel) && status < 400) deps.logger.debug('request', fields)
  else deps.logger.info('request', fields)
}
