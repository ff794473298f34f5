/**
 * The console's fraud guard page (docs/console.md, docs/fraud-guard.md):
 * active blocks with the evidence rule 4 saw when it blocked, refusals and
 * would-be refusals (monitor mode) over the period, conversion by country
 * (rollups) and by prefix (the rollup's sums over the last 24 hours, whatever
 * the period: the guard keeps its per-send rows for 24 h only).
 */
import type { ConsoleStatsDeps, PeriodRange } from './console-stats.ts'
import { groupBy, periodRange, pickAccount, type Counts, type Period } from './console-stats.ts'
import type { FraudMode, Repos, ScopeKind } from './ports/index.ts'

const DAY = 86_400_000
/** Prefixes shown at most (most sends first). */
const PREFIXES = 50

export interface BlockEvidence {
  account: string
  kind: ScopeKind
  scope: string
  rule: 'conversion'
  level: number
  startedAt: number | null
  until: number
  /** Counted sends and approvals of the window rule 4 judged when it blocked. */
  evidence: { from: number; to: number; sends: number; approved: number; conversion: number }
}

export interface FraudPage {
  account: string | null
  range: PeriodRange
  mode: FraudMode
  blocks: BlockEvidence[]
  /** Sends the guard refused, per rule and country (`''`: none). */
  refusals: { rule: string; country: string; refusals: number }[]
  /** Sends monitor mode let through although a rule would have refused them, per country. */
  monitored: { country: string; sends: number }[]
  countries: { key: string; counts: Counts }[]
  prefixes: { from: number; rows: { account: string; prefix: string; sends: number; approved: number; conversion: number }[] }
}

export class ConsoleFraud {
  constructor(private readonly d: ConsoleStatsDeps) {}

  page(period: Period, accountName?: string): Promise<{ ok: true; value: FraudPage } | { ok: false; error: string }> {
    const now = this.d.clock.now()
    const range = periodRange(period, now)
    const settings = this.d.fraudSettings()
    return this.d.storage.read(async (r) => {
      const pick = await pickAccount(r, accountName)
      if (!pick.ok) return pick
      const id = pick.account?.id ?? null
      const names = new Map((await r.admin.listAccounts()).map((a) => [a.id, a.name]))
      const nameOf = (accountId: number) => names.get(accountId) ?? String(accountId)
      const { blocks, named } = await this.blocksWithEvidence(r, id, now, settings.conversionGraceSeconds, nameOf)
      const refusals = await refusalsByRule(r, range, id)
      const rows = (await r.stats.rollups(range.span, range.from, range.to, id)).filter((x) => x.country !== '')
      const countries = groupBy(rows, (x) => x.country)
      const monitored = countries.filter((c) => c.counts.monitored > 0).map((c) => ({ country: c.key, sends: c.counts.monitored }))
      // The rollup's sums over the 24 hours holding the time of its last run.
      const cursor = await r.rollups.cursor()
      const prefixFrom = cursor === null ? now - (now % 3_600_000) : ((JSON.parse(cursor) as { prefixFrom?: number }).prefixFrom ?? now)
      const prefixes = (await r.stats.topPrefixes(id, PREFIXES)).map((p) => ({
        account: nameOf(p.accountId),
        // otpd keeps no prefix in clear (docs/api.md#fraud-guard): a block names its prefix; any other range shows its counting key.
        prefix: named.get(`${p.accountId}|${p.prefix}`) ?? `range #${p.prefix.slice(0, 8)}`,
        sends: p.sends,
        approved: p.approved,
        conversion: p.sends === 0 ? 0 : p.approved / p.sends,
      }))
      return {
        ok: true as const,
        value: {
          account: pick.account?.name ?? null,
          range,
          mode: settings.mode,
          blocks,
          refusals,
          monitored,
          countries,
          prefixes: { from: prefixFrom, rows: prefixes },
        },
      }
    })
  }

  /**
   * The active blocks, each with the conversion that started it; and the
   * blocked prefixes by their counting key, so that the prefix table can name them.
   */
  private async blocksWithEvidence(r: Repos, id: number | null, now: number, graceSeconds: number, nameOf: (accountId: number) => string) {
    const blocks: BlockEvidence[] = []
    const named = new Map<string, string>()
    for (const b of await r.fraud.activeBlocks(id ?? undefined, now)) {
      const started = b.startedAt ?? now
      const from = Math.max(started - DAY + 1, b.countsFrom)
      const to = started - graceSeconds * 1000
      // A prefix's sends are counted under its key, never under the prefix (otp/fraud.ts prefixKey).
      const counted = b.kind === 'prefix' ? this.d.prefixKey(b.accountId, b.scope) : b.scope
      if (b.kind === 'prefix') named.set(`${b.accountId}|${counted}`, b.scope)
      const c = to < from ? { sends: 0, approved: 0 } : await r.fraud.conversion(b.accountId, b.kind, counted, from, to)
      blocks.push({
        account: nameOf(b.accountId),
        kind: b.kind,
        scope: b.scope,
        rule: 'conversion',
        level: b.level,
        startedAt: b.startedAt,
        until: b.until!,
        evidence: { from, to, ...c, conversion: c.sends === 0 ? 0 : c.approved / c.sends },
      })
    }
    return { blocks, named }
  }
}

/** The refusals in the period, per rule and country, most first. */
async function refusalsByRule(r: Repos, range: PeriodRange, id: number | null): Promise<FraudPage['refusals']> {
  const refusals = new Map<string, { rule: string; country: string; refusals: number }>()
  for (const x of await r.stats.refusals(range.from, range.to, id)) {
    const k = `${x.rule}|${x.country}`
    const had = refusals.get(k)
    if (had) had.refusals += x.refusals
    else refusals.set(k, { rule: x.rule, country: x.country, refusals: x.refusals })
  }
  return [...refusals.values()].sort((a, b) => b.refusals - a.refusals)
}
