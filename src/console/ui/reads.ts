/**
 * What the console's pages read, taken from the same domain functions as the
 * JSON read endpoints (console/read-routes.ts): no HTTP to itself. A filter
 * the operator got wrong (an unknown account, a bad search) is a refusal with
 * its message; the page shows it.
 */
import type { ConsoleReadDeps } from '../read-routes.ts'
import { systemView } from '../system.ts'
import { consoleMask } from '../../lib/mask.ts'
import { type Actor, listAudit } from '../../otp/audit.ts'
import type { Period } from '../../otp/console-stats.ts'
import type { AuditRow, Storage, VerificationStatus } from '../../otp/ports/index.ts'
import type { SystemView } from './pages/system.tsx'
import { type ListPage, timeText } from './widgets.tsx'
import type { WebhooksView } from './pages/webhooks.tsx'
import type { RefusalSummary, TimelineEntry, VerificationDetail, VerificationSummary } from './pages/verifications.tsx'
import type { RefusalView, VerificationView } from '../../otp/console-search.ts'

/** Rows per page of every list the console pages (docs/console.md#lists). */
export const LIST_PAGE = 50

/** The first `LIST_PAGE` of `rows` (read with one more), and where the next page starts. */
export function pageOf<T, C>(rows: T[], cursor: (last: T) => C): ListPage<T, C> {
  const shown = rows.slice(0, LIST_PAGE)
  return { rows: shown, next: rows.length > LIST_PAGE ? cursor(shown.at(-1)!) : null }
}

/** A page of a list held whole and ordered by id (keys, accounts): the rows after `after`. */
export function pageAfter<T extends { id: number }>(rows: T[], after?: number): ListPage<T, number> {
  return pageOf(
    rows.filter((r) => after === undefined || r.id > after),
    (r) => r.id,
  )
}

export const PERIOD_MS: Record<Period, number> = { '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 }

export interface ScopeQuery {
  account: string | undefined
  period: Period
}

/** A refusal the page shows (4xx). */
export class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

type Result<T> = { ok: true; value: T } | { ok: false; error: string; status?: number }

function unwrap<T>(r: Result<T>): T {
  if (!r.ok) throw new Refused(r.status ?? 404, r.error)
  return r.value
}

function summary(x: VerificationView): VerificationSummary {
  const v = x.verification
  return {
    id: v.id,
    account: x.account,
    channel: v.channel,
    recipient: consoleMask(v.recipientMask),
    country: v.country ?? null,
    status: x.status,
    createdAt: v.createdAt,
  }
}

function refusalSummary(x: RefusalView): RefusalSummary {
  const data = (JSON.parse(x.send.body) as { data?: Record<string, unknown> }).data ?? {}
  const text = (v: unknown) => (typeof v === 'string' ? v : '')
  return {
    at: x.send.occurredAt,
    account: x.account,
    channel: text(data.channel),
    recipient: consoleMask(text(data.recipient)),
    rule: text(data.rule),
    country: text(data.country),
  }
}

/** An event's data in a line: its status, provider, attempts... (the body's recipients are masked already). */
function describe(data: Record<string, unknown>): string {
  return Object.entries(data)
    .filter(([k, v]) => v !== null && typeof v !== 'object' && k !== 'verification_id')
    .map(([k, v]) => `${k.replace(/_/g, ' ')}: ${k === 'recipient' ? consoleMask(String(v)) : String(v)}`)
    .join(', ')
}

export function pageReads(deps: ConsoleReadDeps, storage: Storage) {
  return {
    overview: async (q: ScopeQuery) => unwrap(await deps.stats.overview(q.period, q.account)),
    fraud: async (q: ScopeQuery) => unwrap(await deps.fraud.page(q.period, q.account)),
    workflows: async (q: ScopeQuery) => unwrap(await deps.workflows.page(q.period, q.account)),
    search: async (
      q: ScopeQuery & { id?: string; recipient?: string; country?: string; status?: string; cursor?: string },
      by: Actor,
    ): Promise<ListPage<VerificationSummary, string> & { refusals: RefusalSummary[] }> => {
      const r = unwrap(await deps.search.verifications({ ...q, status: q.status as VerificationStatus | undefined, limit: LIST_PAGE }, by))
      return { rows: r.rows.map(summary), next: r.next, refusals: (r.refusals ?? []).map(refusalSummary) }
    },
    verification: async (id: string): Promise<VerificationDetail> => {
      const { view, timeline } = unwrap(await deps.search.verification(id))
      const v = view.verification
      const entries: TimelineEntry[] = [
        { at: v.createdAt, kind: 'created', detail: `${v.channel} to ${consoleMask(v.recipientMask)}` },
        ...timeline.map((e) => {
          const data = (JSON.parse(e.body) as { data?: Record<string, unknown> }).data ?? {}
          return { at: e.occurredAt, kind: e.type.replace(/^verification\./, ''), detail: describe(data) }
        }),
      ]
      const facts = [
        { label: 'Expires', value: timeText(v.expiresAt) },
        { label: 'Wrong codes', value: String(v.failedAttempts) },
        { label: 'Delivery', value: v.delivery === null ? 'none' : `${v.delivery}${v.deliveryProvider ? ` (${v.deliveryProvider})` : ''}` },
        { label: 'Test recipient', value: v.testMode === null ? 'no' : 'yes' },
        // A hook's delivery: its identity server checks the code (docs/integrations.md#what-otpd-records).
        ...(v.checkedBy === undefined ? [] : [{ label: 'Code checked by', value: `hook ${v.checkedBy} (its identity server)` }]),
      ]
      // WhatsApp's template language, and a vendor's error of an undelivered message (docs/delivery.md#whatsapp).
      if (v.deliveryLanguage) facts.push({ label: 'Template language', value: v.deliveryLanguage })
      if (v.deliveryError) facts.push({ label: 'Vendor error', value: `${v.deliveryError.code} ${v.deliveryError.title}`.trim() })
      return { ...summary(view), facts, timeline: entries }
    },
    webhooks: async (q: ScopeQuery, cursors: { before?: number; endpointsAfter?: number } = {}): Promise<WebhooksView> => {
      const w = unwrap(await deps.search.webhooks({ period: q.period, account: q.account, before: cursors.before, limit: LIST_PAGE }))
      return {
        endpoints: pageAfter(w.endpoints, cursors.endpointsAfter),
        later: { endpoints: cursors.endpointsAfter !== undefined, deliveries: cursors.before !== undefined },
        deliveries: w.deliveries.map((d) => ({ ...d, account: w.accounts.get(d.accountId) ?? String(d.accountId) })),
        next: w.next,
      }
    },
    system: async (): Promise<SystemView> => {
      const s = await systemView(deps.system)
      return {
        version: s.version,
        engine: s.engine,
        database: s.database,
        databaseBytes: s.database_bytes,
        checks: s.checks,
        providers: s.providers,
        circuits: s.circuits,
        config: s.config,
      }
    },
    audit: async (q: ScopeQuery, now: number, beforeId?: number): Promise<ListPage<AuditRow, number>> =>
      pageOf(await listAudit(storage, { since: now - PERIOD_MS[q.period], beforeId, limit: LIST_PAGE + 1 }), (e) => e.id),
  }
}

export type PageReads = ReturnType<typeof pageReads>
