/**
 * The console's figures (docs/console.md): the overview and the fraud
 * guard's page, for one account or all, over a period. Every aggregate comes
 * from the rollups (rollup.ts), summed over the period's buckets; the period
 * is its last `buckets` buckets, the current one included, so its start is
 * exact to the bucket (a minute for 1 h, an hour for 24 h, 6 hours for 7 d
 * (UTC 00, 06, 12, 18), a UTC day for 30 d).
 */
import type { Clock } from '../lib/clock.ts'
import type { FraudSettings } from './fraud.ts'
import type { AccountRow, Repos, RollupRow, Storage } from './ports/index.ts'
import { ROLLUP_COUNTS, SPAN, type RollupCounts, type Span } from './ports/stats.ts'
import type { Channel } from './types.ts'

export const PERIODS = ['1h', '24h', '7d', '30d'] as const
export type Period = (typeof PERIODS)[number]

const PERIOD_BUCKETS: Record<Period, { span: Span; buckets: number }> = {
  '1h': { span: SPAN.minute, buckets: 60 },
  '24h': { span: SPAN.hour, buckets: 24 },
  '7d': { span: SPAN.quarterDay, buckets: 28 },
  '30d': { span: SPAN.day, buckets: 30 },
}

export interface PeriodRange {
  period: Period
  span: Span
  /** [from, to): whole buckets, the last one holding `now`. */
  from: number
  to: number
}

export function periodRange(period: Period, now: number): PeriodRange {
  const { span, buckets } = PERIOD_BUCKETS[period]
  const to = now - (now % span) + span
  return { period, span, from: to - buckets * span, to }
}

/** A filter that named no account (every account) or an account that exists. */
export type AccountPick = { ok: true; account: AccountRow | null } | { ok: false; error: string }

export async function pickAccount(r: Repos, name: string | undefined): Promise<AccountPick> {
  if (name === undefined) return { ok: true, account: null }
  const account = await r.admin.findAccount(name)
  return account ? { ok: true, account } : { ok: false, error: `account '${name}' does not exist` }
}

export interface Counts extends RollupCounts {
  /** approved / the sends otpd checks (0 without any): a hook's are left out (docs/integrations.md#what-otpd-records). */
  conversion: number
}

function zero(): RollupCounts {
  return { sends: 0, accepted: 0, delivered: 0, undelivered: 0, failed: 0, refunded: 0, approved: 0, monitored: 0, checked: 0 }
}

function add(into: RollupCounts, r: RollupCounts): void {
  for (const c of ROLLUP_COUNTS) into[c] += r[c]
}

function withConversion(c: RollupCounts): Counts {
  const checkable = c.sends - c.checked
  return { ...c, conversion: checkable <= 0 ? 0 : c.approved / checkable }
}

/** Rows summed per `key`, most sends first (then by key). */
export function groupBy<K extends string>(rows: RollupRow[], key: (r: RollupRow) => K): { key: K; counts: Counts }[] {
  const m = new Map<K, RollupCounts>()
  for (const r of rows) {
    const k = key(r)
    let c = m.get(k)
    if (!c) m.set(k, (c = zero()))
    add(c, r)
  }
  return [...m]
    .map(([k, c]) => ({ key: k, counts: withConversion(c) }))
    .sort((a, b) => b.counts.sends - a.counts.sends || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
}

export interface ProviderFigures {
  provider: string
  channel: string
  /** Sends it took. */
  accepted: number
  delivered: number
  undelivered: number
  /** delivered / accepted. */
  deliveryRate: number
  /** Taken after the channel's first provider failed (it is not first in the channel's order). */
  failover: boolean
}

export interface Overview {
  account: string | null
  range: PeriodRange
  /** When the rollups were last brought up to date (null: never). */
  asOf: number | null
  totals: Counts
  byChannel: { key: string; counts: Counts }[]
  byCountry: { key: string; counts: Counts }[]
  series: { at: number; sends: number; approved: number }[]
  providers: ProviderFigures[]
  /** Share of the sends a provider took that a later provider of the channel took. */
  failoverShare: number
  credits: { balance: number; dailyCap: number | null; spent: number; spent24h: number }
}

export interface ConsoleStatsDeps {
  storage: Storage
  clock: Clock
  /** Each channel's providers in the configured order (the first is the primary). */
  providers(): Record<Channel, string[]>
  fraudSettings(): FraudSettings
  /** A prefix's counting key, as the fraud guard records its sends (otp/fraud.ts prefixKey). */
  prefixKey(accountId: number, prefix: string): string
}

export class ConsoleStats {
  constructor(private readonly d: ConsoleStatsDeps) {}

  overview(period: Period, accountName?: string): Promise<{ ok: true; value: Overview } | { ok: false; error: string }> {
    const now = this.d.clock.now()
    const range = periodRange(period, now)
    return this.d.storage.read(async (r) => {
      const pick = await pickAccount(r, accountName)
      if (!pick.ok) return pick
      const accountId = pick.account?.id ?? null
      const rows = await r.stats.rollups(range.span, range.from, range.to, accountId)
      const totals = zero()
      const series = new Map<number, { at: number; sends: number; approved: number }>()
      for (let at = range.from; at < range.to; at += range.span) series.set(at, { at, sends: 0, approved: 0 })
      for (const row of rows) {
        add(totals, row)
        const b = series.get(row.at)
        if (b) {
          b.sends += row.sends
          b.approved += row.approved
        }
      }
      const order = this.d.providers()
      const providers: ProviderFigures[] = groupBy(
        rows.filter((x) => x.provider !== ''),
        (x) => `${x.channel}|${x.provider}`,
      ).map(({ key, counts }) => {
        const [channel, provider] = key.split('|') as [Channel, string]
        const first = order[channel]?.[0]
        return {
          provider,
          channel,
          accepted: counts.accepted,
          delivered: counts.delivered,
          undelivered: counts.undelivered,
          deliveryRate: counts.accepted === 0 ? 0 : counts.delivered / counts.accepted,
          failover: first !== undefined && first !== provider,
        }
      })
      const failedOver = providers.filter((p) => p.failover).reduce((n, p) => n + p.accepted, 0)
      const credits = await this.credits(r, pick.account, now, totals)
      const cursor = await r.rollups.cursor()
      return {
        ok: true as const,
        value: {
          account: pick.account?.name ?? null,
          range,
          asOf: cursor === null ? null : (JSON.parse(cursor) as { at: number }).at,
          totals: withConversion(totals),
          byChannel: groupBy(rows, (x) => x.channel),
          byCountry: groupBy(
            rows.filter((x) => x.country !== ''),
            (x) => x.country,
          ),
          series: [...series.values()],
          providers,
          failoverShare: totals.accepted === 0 ? 0 : failedOver / totals.accepted,
          credits,
        },
      }
    })
  }

  /** Balance (every account's together without an account), the daily cap, and credits spent: sends less refunds. */
  private async credits(r: Repos, account: AccountRow | null, now: number, period: RollupCounts): Promise<Overview['credits']> {
    const balance = account ? account.balance : (await r.admin.listAccounts()).reduce((n, a) => n + a.balance, 0)
    const dailyCap = account ? (await r.fraud.accountSettings(account.id)).dailyCreditLimit : null
    const day = periodRange('24h', now)
    const last24h = zero()
    for (const row of await r.stats.rollups(day.span, day.from, day.to, account?.id ?? null)) add(last24h, row)
    return { balance, dailyCap, spent: period.sends - period.refunded, spent24h: last24h.sends - last24h.refunded }
  }
}

export { zero as zeroCounts, add as addCounts, withConversion }
