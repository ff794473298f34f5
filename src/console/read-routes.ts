/**
 * The console's read endpoints (docs/console.md#read-endpoints), GET only, as one
 * Elysia plugin: the console's session gate wraps it, and it is mounted on
 * the admin listener only. Each checks its query string (read-queries.ts: a
 * bad one is a 400 naming the parameter), asks the domain (otp/console-*.ts)
 * and answers JSON in the API's style (views.ts): snake_case, ISO 8601 times,
 * errors as `{ error, request_id }`. Recipients appear masked only.
 */
import type { Static, TObject } from '@sinclair/typebox'
import { type AnyElysia, Elysia } from 'elysia'
import type { Json } from '../http/openapi-parts.ts'
import { errorReply, respond, type Reply } from '../http/reply.ts'
import type { Logger } from '../lib/logger.ts'
import type { ConsoleFraud } from '../otp/console-fraud.ts'
import type { ConsoleSearch } from '../otp/console-search.ts'
import type { ConsoleStats, Period } from '../otp/console-stats.ts'
import type { ConsoleWorkflows } from '../otp/console-workflows.ts'
import type { VerificationStatus } from '../otp/ports/index.ts'
import { COUNTS_EXAMPLE, queryParams, READ_AT, readOperation } from './read-openapi.ts'
import { checkedQuery, EmptyQuery, LIMIT_INVALID, limitOf, PeriodQuery, SearchQuery, WebhooksQuery } from './read-queries.ts'
import { SEARCH_PATH } from './search-routes.ts'
import { type SystemDeps, systemView } from './system.ts'
import { fraudPageView, iso, overviewView, timelineView, verificationView, webhooksView, workflowsView } from './views.ts'

export interface ConsoleReadDeps {
  stats: ConsoleStats
  fraud: ConsoleFraud
  workflows: ConsoleWorkflows
  search: ConsoleSearch
  system: SystemDeps
  logger: Logger
}

type Run = (request: Request, body: () => Promise<Reply>) => Promise<Response>
type Picked<T> = { ok: true; value: T } | { ok: false; error: string }

const FAULT = 'Internal server error'
export const RECIPIENT_IN_URL = `recipient is not taken in a URL, where it would stay in histories and logs: POST the search to ${SEARCH_PATH}`
const ok = (body: Record<string, unknown>): Reply => ({ status: 200, body })

export function consoleReadRoutes(deps: ConsoleReadDeps) {
  const run: Run = (request, body) => respond(deps.logger, request, FAULT, body)
  const app = new Elysia({ name: 'console-read-routes' })
  statsRoutes(app, deps, run)
  searchRoutes(app, deps, run)
  app.get('/console/api/system', ({ request }) =>
    run(request, async () => {
      const q = checkedQuery(EmptyQuery, request)
      if (!q.ok) return errorReply(400, q.error)
      return ok(await systemView(deps.system))
    }),
  )
  return app
}

/** The figures: the overview, the fraud guard's page and the workflows', by period and account (404: no such account). */
function statsRoutes(app: AnyElysia, deps: ConsoleReadDeps, run: Run): void {
  const byPeriod = <T>(path: string, read: (period: Period, account?: string) => Promise<Picked<T>>, view: (x: T) => Record<string, unknown>) =>
    app.get(path, ({ request }) =>
      run(request, async () => {
        const q = checkedQuery(PeriodQuery, request)
        if (!q.ok) return errorReply(400, q.error)
        const out = await read(q.value.period ?? '24h', q.value.account)
        return out.ok ? ok(view(out.value)) : errorReply(404, out.error)
      }),
    )
  byPeriod('/console/api/overview', (period, account) => deps.stats.overview(period, account), overviewView)
  byPeriod('/console/api/fraud', (period, account) => deps.fraud.page(period, account), fraudPageView)
  byPeriod('/console/api/workflows', (period, account) => deps.workflows.page(period, account), workflowsView)
}

/** A query of a paged search, checked with its page size; or the 400 to answer. */
function checkedPage<S extends TObject>(schema: S, request: Request): { ok: true; value: Static<S>; limit: number } | { ok: false; reply: Reply } {
  const q = checkedQuery(schema, request)
  if (!q.ok) return { ok: false, reply: errorReply(400, q.error) }
  const limit = limitOf((q.value as { limit?: string }).limit)
  return limit === null ? { ok: false, reply: errorReply(400, LIMIT_INVALID) } : { ok: true, value: q.value, limit }
}

/** The searches: verifications, one verification's timeline, webhook deliveries. */
function searchRoutes(app: AnyElysia, deps: ConsoleReadDeps, run: Run): void {
  app.get('/console/api/verifications', ({ request }) =>
    run(request, async () => {
      // A full number or address in a URL stays in histories and access logs: it is searched by POST.
      if (new URL(request.url).searchParams.has('recipient')) return errorReply(400, RECIPIENT_IN_URL)
      const q = checkedPage(SearchQuery, request)
      if (!q.ok) return q.reply
      const { limit } = q
      const status = q.value.status as VerificationStatus | undefined
      const out = await deps.search.verifications({ ...q.value, period: q.value.period ?? '24h', status, limit })
      if (!out.ok) return errorReply(out.status, out.error, out.retryAfter)
      return ok({ from: iso(out.value.from), to: iso(out.value.to), verifications: out.value.rows.map(verificationView), next: out.value.next })
    }),
  )
  app.get('/console/api/verifications/:id', ({ request, params }) =>
    run(request, async () => {
      const q = checkedQuery(EmptyQuery, request)
      if (!q.ok) return errorReply(400, q.error)
      const out = await deps.search.verification((params as { id?: string }).id ?? '')
      return out.ok ? ok(timelineView(out.value)) : errorReply(out.status, out.error)
    }),
  )
  app.get('/console/api/webhooks', ({ request }) =>
    run(request, async () => {
      const q = checkedPage(WebhooksQuery, request)
      if (!q.ok) return q.reply
      const { limit } = q
      const before = q.value.cursor === undefined ? undefined : Number(q.value.cursor)
      const out = await deps.search.webhooks({ period: q.value.period ?? '24h', account: q.value.account, status: q.value.status, before, limit })
      return out.ok ? ok(webhooksView(out.value)) : errorReply(out.status, out.error)
    }),
  )
}

/** The read endpoints' path objects for an OpenAPI document (app/openapi.ts consoleReadPaths). */
export const readOperations: Record<string, Json> = {
  '/console/api/overview': readOperation(
    'consoleOverview',
    'Sends, deliveries, approvals and conversion by channel, country and provider; a time series; credits',
    queryParams(PeriodQuery),
    {
      account: null,
      period: '24h',
      from: '2025-12-31T13:00:00.000Z',
      to: '2026-01-01T13:00:00.000Z',
      bucket_seconds: 3600,
      as_of: READ_AT,
      totals: COUNTS_EXAMPLE,
      by_channel: [{ channel: 'sms', ...COUNTS_EXAMPLE }],
      by_country: [{ country: 'US', ...COUNTS_EXAMPLE }],
      series: [{ at: READ_AT, sends: 120, approved: 96 }],
      providers: [{ provider: 'twilio', channel: 'sms', accepted: 118, delivered: 110, undelivered: 3, delivery_rate: 0.93, failover: false }],
      failover_share: 0,
      credits: { balance: 10_000, daily_cap: 5000, spent: 118, spent_24h: 118 },
    },
    "account 'shop' does not exist",
  ),
  '/console/api/verifications': readOperation(
    'consoleVerifications',
    'Verifications newest first, by id, country, status and period; `next` continues (by recipient: POST /console/api/verifications/search)',
    queryParams(SearchQuery).filter((p) => p.name !== 'recipient'),
    {
      from: '2025-12-31T13:00:00.000Z',
      to: '2026-01-01T13:00:00.000Z',
      verifications: [
        {
          verification_id: '6f1c2b9e-3d4a-4c5b-8e7f-0a1b2c3d4e5f',
          account: 'default',
          channel: 'sms',
          recipient: '+*********23',
          country: 'US',
          status: 'approved',
          test: false,
          created_at: READ_AT,
          expires_at: '2026-01-01T12:05:00.000Z',
          approved_at: '2026-01-01T12:00:40.000Z',
          failed_attempts: 0,
          locked_until: null,
          delivery: { status: 'delivered', provider: 'twilio', updated_at: '2026-01-01T12:00:03.000Z' },
          fraud_monitored: null,
          checked_by: null,
        },
      ],
      next: '1767268800000.1234',
    },
  ),
  '/console/api/verifications/{verification_id}': {
    parameters: [{ name: 'verification_id', in: 'path', required: true, schema: { type: 'string' } }],
    ...readOperation(
      'consoleVerification',
      'A verification (recipient masked) and its timeline of events',
      [],
      {
        verification: { verification_id: '6f1c2b9e-3d4a-4c5b-8e7f-0a1b2c3d4e5f', status: 'approved' },
        timeline: [
          { sequence: 0, type: 'created', at: READ_AT, status: null, data: {} },
          { sequence: 1, type: 'verification.sent', at: '2026-01-01T12:00:01.000Z', status: 'pending', data: { provider: 'twilio' } },
          { sequence: 2, type: 'verification.approved', at: '2026-01-01T12:00:40.000Z', status: 'approved', data: {} },
        ],
      },
      'verification not found',
    ),
  },
  '/console/api/fraud': readOperation(
    'consoleFraud',
    'Fraud guard: active blocks with evidence, refusals, would-be refusals (monitor), conversion by country and prefix',
    queryParams(PeriodQuery),
    {
      account: null,
      period: '24h',
      mode: 'enforce',
      blocks: [
        {
          account: 'default',
          rule: 'conversion',
          scope: { kind: 'prefix', value: '+99890123' },
          level: 0,
          started_at: READ_AT,
          until: '2026-01-01T12:15:00.000Z',
          evidence: { from: '2025-12-31T12:00:00.001Z', to: '2026-01-01T11:50:00.000Z', sends: 40, approved: 1, conversion: 0.025 },
        },
      ],
      refusals: [{ rule: 'conversion', country: 'UZ', refusals: 12 }],
      monitored: [],
      countries: [{ country: 'UZ', ...COUNTS_EXAMPLE }],
      prefixes: { from: '2025-12-31T13:00:00.000Z', rows: [{ account: 'default', prefix: '+99890123', sends: 40, approved: 1, conversion: 0.025 }] },
    },
    "account 'shop' does not exist",
  ),
  '/console/api/workflows': readOperation(
    'consoleWorkflows',
    'Workflow sends: which step converted (by index, 0 the first), by country and by channel, and the share of approvals a later step saved',
    queryParams(PeriodQuery),
    {
      account: null,
      period: '24h',
      from: '2025-12-31T13:00:00.000Z',
      to: '2026-01-01T13:00:00.000Z',
      bucket_seconds: 3600,
      totals: { started: 50, approved: 40, approved_by_step: [30, 8, 2], fallback_saved: 0.25 },
      by_country: [{ country: 'IN', started: 50, approved: 40, approved_by_step: [30, 8, 2], fallback_saved: 0.25 }],
      by_channel: [
        { channel: 'whatsapp', steps_started: 50, approved: 30, approved_by_step: [30, 0, 0] },
        { channel: 'sms', steps_started: 18, approved: 8, approved_by_step: [0, 8, 0] },
        { channel: 'voice', steps_started: 9, approved: 2, approved_by_step: [0, 0, 2] },
      ],
    },
    "account 'shop' does not exist",
  ),
  '/console/api/webhooks': readOperation(
    'consoleWebhooks',
    'Webhook endpoints (secrets masked) and recent deliveries with status and attempts',
    queryParams(WebhooksQuery),
    {
      endpoints: [
        { id: '1', account: 'default', url: 'https://example.com/hooks/otpd', events: null, secret: '********', created_at: READ_AT, rotated_at: null },
      ],
      deliveries: [
        {
          event_id: '0f7e2c1a-9b8d-4c6e-a5f4-3b2a1c0d9e8f',
          type: 'verification.approved',
          account: 'default',
          occurred_at: READ_AT,
          endpoint_id: '1',
          status: 'delivered',
          attempts: 1,
          next_attempt_at: null,
          last_error: null,
          updated_at: READ_AT,
        },
      ],
      next: null,
    },
  ),
  '/console/api/system': readOperation(
    'consoleSystem',
    'Version, engine, database size, readiness, providers with their circuits and the configuration with secrets masked',
    [],
    {
      version: '1.0.0',
      engine: 'sqlite',
      database: '/var/lib/otpd/otpd.db',
      database_bytes: 1_562_000_000,
      ready: true,
      checks: { database: 'ok', migrations: 'ok', delivery: 'ok' },
      providers: { sms: [{ name: 'twilio', type: 'twilio' }], email: [{ name: 'log', type: 'log' }], voice: [{ name: 'log', type: 'log' }] },
      circuits: [
        { provider: 'log', circuit: 'closed', in_flight: 0, waiting: 0, max_in_flight: 10_000 },
        { provider: 'twilio', circuit: 'open', in_flight: 0, waiting: 0, max_in_flight: 500 },
      ],
      config: { server: { listen: '127.0.0.1:8080', metrics_token: '********' } },
    },
  ),
}
