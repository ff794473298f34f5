/**
 * What the console's pages read, taken from the same domain functions as the
 * JSON read endpoints (console/read-routes.ts): no HTTP to itself. A filter
 * the operator got wrong (an unknown account, a bad search) is a refusal with
 * its message; the page shows it.
 */
import type { ConsoleReadDeps } from '../read-routes.ts'
import { systemView } from '../system.ts'
import { listAudit } from '../../otp/audit.ts'
import type { Period } from '../../otp/console-stats.ts'
import type { AuditRow, Storage, VerificationStatus } from '../../otp/ports/index.ts'
import type { SystemView } from './pages/system.tsx'
import type { WebhooksView } from './pages/webhooks.tsx'
import type { TimelineEntry, VerificationDetail, VerificationSummary } from './pages/verifications.tsx'
import type { VerificationView } from '../../otp/console-search.ts'

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
  return { id: v.id, account: x.account, channel: v.channel, recipient: v.recipientMask, country: v.country ?? null, status: x.status, createdAt: v.createdAt }
}

/** An event's data in a line: its status, provider, attempts... (the body's recipients are masked already). */
function describe(data: Record<string, unknown>): string {
  return Object.entries(data)
    .filter(([k, v]) => v !== null && typeof v !== 'object' && k !== 'verification_id')
    .map(([k, v]) => `${k.replace(/_/g, ' ')}: ${String(v)}`)
    .join(', ')
}

export function pageReads(deps: ConsoleReadDeps, storage: Storage) {
  return {
    overview: async (q: ScopeQuery) => unwrap(await deps.stats.overview(q.period, q.account)),
    fraud: async (q: ScopeQuery) => unwrap(await deps.fraud.page(q.period, q.account)),
    search: async (q: ScopeQuery & { id?: string; recipient?: string; country?: string; status?: string }): Promise<VerificationSummary[]> => {
      const r = await deps.search.verifications({ ...q, status: q.status as VerificationStatus | undefined, limit: 50 })
      return unwrap(r).rows.map(summary)
    },
    verification: async (id: string): Promise<VerificationDetail> => {
      const { view, timeline } = unwrap(await deps.search.verification(id))
      const v = view.verification
      const entries: TimelineEntry[] = [
        { at: v.createdAt, kind: 'created', detail: `${v.channel} to ${v.recipientMask}` },
        ...timeline.map((e) => {
          const data = (JSON.parse(e.body) as { data?: Record<string, unknown> }).data ?? {}
          return { at: e.occurredAt, kind: e.type.replace(/^verification\./, ''), detail: describe(data) }
        }),
      ]
      const facts = [
        { label: 'Expires', value: new Date(v.expiresAt).toISOString() },
        { label: 'Wrong codes', value: String(v.failedAttempts) },
        { label: 'Delivery', value: v.delivery === null ? 'none' : `${v.delivery}${v.deliveryProvider ? ` (${v.deliveryProvider})` : ''}` },
        { label: 'Test recipient', value: v.testMode === null ? 'no' : 'yes' },
        // A hook's delivery: its identity server checks the code (docs/integrations.md#what-otpd-records).
        ...(v.checkedBy === undefined ? [] : [{ label: 'Code checked by', value: `hook ${v.checkedBy} (its identity server)` }]),
      ]
      return { ...summary(view), facts, timeline: entries }
    },
    webhooks: async (q: ScopeQuery): Promise<WebhooksView> => {
      const w = unwrap(await deps.search.webhooks({ period: q.period, account: q.account, limit: 100 }))
      return { endpoints: w.endpoints, deliveries: w.deliveries.map((d) => ({ ...d, account: w.accounts.get(d.accountId) ?? String(d.accountId) })) }
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
        config: s.config,
      }
    },
    audit: async (q: ScopeQuery, now: number): Promise<AuditRow[]> => listAudit(storage, { since: now - PERIOD_MS[q.period], limit: 500 }),
  }
}

export type PageReads = ReturnType<typeof pageReads>
