/**
 * Rows as the console's JSON shows them: snake_case and ISO times, as the
 * CLI's --json (never a key's value or hash, a webhook's secret, or a
 * recipient unmasked).
 */
import type { Config } from '../config/schema.ts'
import { consoleMask } from '../lib/mask.ts'
import type { FraudPage } from '../otp/console-fraud.ts'
import type { VerificationView } from '../otp/console-search.ts'
import type { Counts, Overview, PeriodRange } from '../otp/console-stats.ts'
import type { WorkflowCounts, WorkflowsPage } from '../otp/console-workflows.ts'
import type { AccountFraudView } from '../otp/fraud-admin.ts'
import type { AccountRow, AuditRow, DeliveryRow, EndpointRow, KeyRow, LedgerRow, TimelineEvent } from '../otp/ports/index.ts'

export const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms).toISOString())

export function keyView(k: KeyRow) {
  return { id: k.id, prefix: k.prefix, name: k.name, account: k.account, status: k.status, created_at: iso(k.createdAt), last_used_at: iso(k.lastUsedAt) }
}

export function accountView(a: AccountRow, f: AccountFraudView, config: Config) {
  return {
    name: a.name,
    balance: a.balance,
    code_length: a.codeLength ?? config.codes.default_length,
    code_length_is_default: a.codeLength === null,
    countries: f.allowedCountries ?? config.fraud.allowed_countries,
    countries_are_default: f.allowedCountries === null,
    daily_credit_limit: f.dailyCreditLimit,
    test_recipients: f.testRecipients,
    created_at: iso(a.createdAt),
  }
}

export function ledgerView(e: LedgerRow) {
  return {
    id: e.id,
    created_at: iso(e.createdAt),
    kind: e.kind,
    amount: e.kind === 'debit' ? -e.amount : e.amount,
    verification_id: e.verificationId,
    note: e.note,
  }
}

export function auditView(e: AuditRow) {
  return { id: e.id, at: iso(e.at), operator: e.operator, source: e.source, action: e.action, subject: e.subject, details: e.details }
}

export function countsView(c: Counts): Record<string, number> {
  return {
    sends: c.sends,
    accepted: c.accepted,
    delivered: c.delivered,
    undelivered: c.undelivered,
    failed: c.failed,
    approved: c.approved,
    checked: c.checked,
    conversion: c.conversion,
  }
}

function rangeView(r: PeriodRange) {
  return { period: r.period, from: iso(r.from), to: iso(r.to), bucket_seconds: r.span / 1000 }
}

function workflowCountsView(c: WorkflowCounts) {
  return { started: c.started, approved: c.approved, approved_by_step: c.approvedByStep, fallback_saved: c.fallbackSaved }
}

/** The workflows page (docs/console.md#workflows): `approved_by_step[i]` counts approvals at step index i (0: the send's own). */
export function workflowsView(w: WorkflowsPage) {
  return {
    account: w.account,
    ...rangeView(w.range),
    totals: workflowCountsView(w.totals),
    // No country stored: the first step was an email.
    by_country: w.byCountry.map((c) => ({ country: c.key || null, ...workflowCountsView(c.counts) })),
    by_channel: w.byChannel.map((c) => ({ channel: c.channel, steps_started: c.stepsStarted, approved: c.approved, approved_by_step: c.approvedByStep })),
  }
}

export function overviewView(o: Overview) {
  return {
    account: o.account,
    ...rangeView(o.range),
    as_of: iso(o.asOf),
    totals: countsView(o.totals),
    by_channel: o.byChannel.map((c) => ({ channel: c.key, ...countsView(c.counts) })),
    by_country: o.byCountry.map((c) => ({ country: c.key, ...countsView(c.counts) })),
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
  }
}

export function fraudPageView(f: FraudPage) {
  return {
    account: f.account,
    ...rangeView(f.range),
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
    countries: f.countries.map((c) => ({ country: c.key, ...countsView(c.counts) })),
    prefixes: { from: iso(f.prefixes.from), rows: f.prefixes.rows },
  }
}

export function verificationView(x: VerificationView): Record<string, unknown> {
  const v = x.verification
  return {
    verification_id: v.id,
    account: x.account,
    channel: v.channel,
    recipient: consoleMask(v.recipientMask),
    country: v.country ?? null,
    status: x.status,
    test: v.testMode !== null,
    created_at: iso(v.createdAt),
    expires_at: iso(v.expiresAt),
    approved_at: iso(v.usedAt),
    failed_attempts: v.failedAttempts,
    locked_until: iso(v.lockedUntil),
    delivery: v.delivery === null ? null : deliveryView(v),
    fraud_monitored: v.fraudMonitored ?? null,
    checked_by: v.checkedBy ?? null,
  }
}

/** As the status endpoint shows it (docs/api.md#verification-status): WhatsApp's template language and a vendor's error when there are. */
function deliveryView(v: VerificationView['verification']): Record<string, unknown> {
  const d: Record<string, unknown> = { status: v.delivery, provider: v.deliveryProvider, updated_at: iso(v.deliveryUpdatedAt) }
  if (v.deliveryLanguage) d.language = v.deliveryLanguage
  if (v.deliveryError) d.error = { code: v.deliveryError.code, title: v.deliveryError.title }
  return d
}

/** A verification and what followed it: the creation is the row itself, then its stored events in order. */
export function timelineView(x: { view: VerificationView; timeline: TimelineEvent[] }) {
  const timeline = x.timeline.map((e) => {
    const data = (JSON.parse(e.body) as { data?: Record<string, unknown> }).data ?? {}
    if (typeof data.recipient === 'string') data.recipient = consoleMask(data.recipient)
    return { sequence: e.sequence, type: e.type, at: iso(e.occurredAt), status: data.status ?? null, data }
  })
  const created = { sequence: 0, type: 'created', at: iso(x.view.verification.createdAt), status: null, data: {} }
  return { verification: verificationView(x.view), timeline: [created, ...timeline] }
}

export function webhooksView(w: { endpoints: EndpointRow[]; deliveries: DeliveryRow[]; next: number | null; accounts: Map<number, string> }) {
  return {
    endpoints: w.endpoints.map((e) => ({
      id: String(e.id),
      account: e.account,
      url: e.url,
      events: e.events,
      // Sealed in the database, and never shown: `otpd webhooks rotate-secret` gives a new one.
      secret: '********',
      created_at: iso(e.createdAt),
      rotated_at: iso(e.rotatedAt),
    })),
    deliveries: w.deliveries.map((d) => ({
      event_id: d.eventId,
      type: d.type,
      account: w.accounts.get(d.accountId) ?? String(d.accountId),
      occurred_at: iso(d.occurredAt),
      endpoint_id: String(d.endpointId),
      status: d.status,
      attempts: d.attempts,
      next_attempt_at: d.status === 'pending' ? iso(d.nextAt) : null,
      last_error: d.lastError,
      updated_at: iso(d.updatedAt),
    })),
    next: w.next === null ? null : String(w.next),
  }
}
