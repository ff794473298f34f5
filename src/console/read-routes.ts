/**
 * The console's read endpoints (docs/console.md#read-endpoints), GET only, as one
 * Elysia plugin: the console's session guard wraps it, and it is mounted on
 * the admin listener only. Each checks its query string (read-queries.ts: a
 * bad one is a 400 naming the parameter), asks the domain (otp/console-*.ts)
 * and answers JSON in the API's style: snake_case, ISO 8601 times, errors as
 * `{ error, request_id }`. Recipients appear masked only.
 */
import { Elysia } from 'elysia'
import type { TObject } from '@sinclair/typebox'
import { errorReply, type Reply } from '../http/reply.ts'
import { respond } from '../http/respond.ts'
import type { Logger } from '../lib/logger.ts'
import type { ConsoleFraud } from '../otp/console-fraud.ts'
import type { ConsoleSearch, VerificationView } from '../otp/console-search.ts'
import type { ConsoleStats, Counts, Period } from '../otp/console-stats.ts'
import type { VerificationStatus } from '../otp/ports/index.ts'
import { checkQuery, EmptyQuery, limitOf, PeriodQuery, SearchQuery, WebhooksQuery } from './read-queries.ts'
import { type SystemDeps, systemView } from './system.ts'

export interface ConsoleReadDeps {
  stats: ConsoleStats
  fraud: ConsoleFraud
  search: ConsoleSearch
  system: SystemDeps
  logger: Logger
}

const FAULT = 'Internal server error'
const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms).toISOString())
const ok = (body: Record<string, unknown>): Reply => ({ status: 200, body })

function counts(c: Counts): Record<string, number> {
  return {
    sends: c.sends,
    accepted: c.accepted,
    delivered: c.delivered,
    undelivered: c.undelivered,
    failed: c.failed,
    approved: c.approved,
    conversion: c.conversion,
  }
}

function range(r: { period: Period; from: number; to: number; span: number }) {
  return { period: r.period, from: iso(r.from), to: iso(r.to), bucket_seconds: r.span / 1000 }
}

export function verificationBody(x: VerificationView): Record<string, unknown> {
  const v = x.verification
  return {
    verification_id: v.id,
    account: x.account,
    channel: v.channel,
    recipient: v.recipientMask,
    country: v.country ?? null,
    status: x.status,
    test: v.testMode !== null,
    created_at: iso(v.createdAt),
    expires_at: iso(v.expiresAt),
    approved_at: iso(v.usedAt),
    failed_attempts: v.failedAttempts,
    locked_until: iso(v.lockedUntil),
    delivery: v.delivery === null ? null : { status: v.delivery, provider: v.deliveryProvider, updated_at: iso(v.deliveryUpdatedAt) },
    fraud_monitored: v.fraudMonitored ?? null,
  }
}

/** The query string as given, each parameter once (a repeated one is a 400). */
function queryOf(request: Request): Record<string, string> | string {
  const out: Record<string, string> = {}
  for (const [k, v] of new URL(request.url).searchParams) {
    if (k in out) return `query parameter '${k}' is given more than once`
    out[k] = v
  }
  return out
}

function checked<S extends TObject>(schema: S, request: Request) {
  const q = queryOf(request)
  return typeof q === 'string' ? ({ ok: false, error: q } as const) : checkQuery(schema, q)
}

export function consoleReadRoutes(deps: ConsoleReadDeps) {
  const run = (request: Request, body: () => Promise<Reply>) => respond(deps.logger, request, FAULT, body)
  return new Elysia({ name: 'console-read-routes' })
    .get('/console/api/overview', ({ request }) =>
      run(request, async () => {
        const q = checked(PeriodQuery, request)
        if (!q.ok) return errorReply(400, q.error)
        const out = await deps.stats.overview(q.value.period ?? '24h', q.value.account)
        if (!out.ok) return errorReply(404, out.error)
        const o = out.value
        return ok({
          account: o.account,
          ...range(o.range),
          as_of: iso(o.asOf),
          totals: counts(o.totals),
          by_channel: o.byChannel.map((c) => ({ channel: c.key, ...counts(c.counts) })),
          by_country: o.byCountry.map((c) => ({ country: c.key, ...counts(c.counts) })),
          series: o.series.map((b) => ({ at: iso(b.at), sends: b.sends, approved: b.approved })),
          providers: o.providers.map((p) => ({
            provider: p.provider,
            channel: p.channel,
            accepted: p.accepted,
            delivered: p.delivered,
            undelivered: p.undelivered,
            delivery_rate: p.deliveryRate,
            failover: p.failover,
          })),
          failover_share: o.failoverShare,
          credits: { balance: o.credits.balance, daily_cap: o.credits.dailyCap, spent: o.credits.spent, spent_24h: o.credits.spent24h },
        })
      }),
    )
    .get('/console/api/verifications', ({ request }) =>
      run(request, async () => {
        const q = checked(SearchQuery, request)
        if (!q.ok) return errorReply(400, q.error)
        const limit = limitOf(q.value.limit)
        if (limit === null) return errorReply(400, "query parameter 'limit' is not valid: rows per page, 1-200 (default 50).")
        const out = await deps.search.verifications({
          ...q.value,
          period: q.value.period ?? '24h',
          status: q.value.status as VerificationStatus | undefined,
          limit,
        })
        if (!out.ok) return errorReply(out.status, out.error)
        return ok({ from: iso(out.value.from), to: iso(out.value.to), verifications: out.value.rows.map(verificationBody), next: out.value.next })
      }),
    )
    .get('/console/api/verifications/:id', ({ request, params }) =>
      run(request, async () => {
        const q = checked(EmptyQuery, request)
        if (!q.ok) return errorReply(400, q.error)
        const out = await deps.search.verification(params.id ?? '')
        if (!out.ok) return errorReply(out.status, out.error)
        const timeline = out.value.timeline.map((e) => {
          const data = (JSON.parse(e.body) as { data?: Record<string, unknown> }).data ?? {}
          return { sequence: e.sequence, type: e.type, at: iso(e.occurredAt), status: data.status ?? null, data }
        })
        const v = out.value.view.verification
        return ok({
          verification: verificationBody(out.value.view),
          // The creation is the row itself; what followed, its stored events in order.
          timeline: [{ sequence: 0, type: 'created', at: iso(v.createdAt), status: null, data: {} }, ...timeline],
        })
      }),
    )
    .get('/console/api/fraud', ({ request }) =>
      run(request, async () => {
        const q = checked(PeriodQuery, request)
        if (!q.ok) return errorReply(400, q.error)
        const out = await deps.fraud.page(q.value.period ?? '24h', q.value.account)
        if (!out.ok) return errorReply(404, out.error)
        const f = out.value
        return ok({
          account: f.account,
          ...range(f.range),
          mode: f.mode,
          blocks: f.blocks.map((b) => ({
            account: b.account,
            rule: b.rule,
            scope: { kind: b.kind, value: b.scope },
            level: b.level,
            started_at: iso(b.startedAt),
            until: iso(b.until),
            evidence: {
              from: iso(b.evidence.from),
              to: iso(b.evidence.to),
              sends: b.evidence.sends,
              approved: b.evidence.approved,
              conversion: b.evidence.conversion,
            },
          })),
          refusals: f.refusals.map((x) => ({ rule: x.rule, country: x.country || null, refusals: x.refusals })),
          monitored: f.monitored,
          countries: f.countries.map((c) => ({ country: c.key, ...counts(c.counts) })),
          prefixes: { from: iso(f.prefixes.from), rows: f.prefixes.rows },
        })
      }),
    )
    .get('/console/api/webhooks', ({ request }) =>
      run(request, async () => {
        const q = checked(WebhooksQuery, request)
        if (!q.ok) return errorReply(400, q.error)
        const limit = limitOf(q.value.limit)
        if (limit === null) return errorReply(400, "query parameter 'limit' is not valid: rows per page, 1-200 (default 50).")
        const before = q.value.cursor === undefined ? undefined : Number(q.value.cursor)
        const out = await deps.search.webhooks({ period: q.value.period ?? '24h', account: q.value.account, status: q.value.status, before, limit })
        if (!out.ok) return errorReply(out.status, out.error)
        const { endpoints, deliveries, next, accounts } = out.value
        return ok({
          endpoints: endpoints.map((e) => ({
            id: String(e.id),
            account: e.account,
            url: e.url,
            events: e.events,
            // Sealed in the database, and never shown: `otpd webhooks rotate-secret` gives a new one.
            secret: '********',
            created_at: iso(e.createdAt),
            rotated_at: iso(e.rotatedAt),
          })),
          deliveries: deliveries.map((d) => ({
            event_id: d.eventId,
            type: d.type,
            account: accounts.get(d.accountId) ?? String(d.accountId),
            occurred_at: iso(d.occurredAt),
            endpoint_id: String(d.endpointId),
            status: d.status,
            attempts: d.attempts,
            next_attempt_at: d.status === 'pending' ? iso(d.nextAt) : null,
            last_error: d.lastError,
            updated_at: iso(d.updatedAt),
          })),
          next: next === null ? null : String(next),
        })
      }),
    )
    .get('/console/api/system', ({ request }) =>
      run(request, async () => {
        const q = checked(EmptyQuery, request)
        if (!q.ok) return errorReply(400, q.error)
        return ok(await systemView(deps.system))
      }),
    )
}
