/**
 * The fraud guard's counters and account settings on PostgreSQL
 * (otp/ports/fraud.ts FraudStore): the shared statements of store/sql/fraud.ts.
 *
 * Exact across nodes: SQLite decides every rule under its single writer;
 * here, inside a write, a rule takes an advisory lock of its subject
 * (store/pg/locks.ts), and the send that passes records itself in the same
 * transaction, before the lock is let go:
 * - rule 2: the end-user IP (its hash is keyed by account), on its first read;
 * - rule 3: the account's country, when otp/fraud.ts asks (lockCountry):
 *   for a send that would count;
 * - rule 4: the scope (`prefix` or `country`), when otp/fraud.ts asks
 *   (lockScope): to start a block, or on every send when the grace period
 *   is short; an unblock from the CLI takes it too;
 * - rule 5: the account, on its first read.
 * otp/fraud.ts check takes them in that order (docs/multi-node.md#the-fraud-guard). The counters
 * that approvals and refunds move (fraud_minutes, fraud_countries) are
 * atomic upserts and take no lock: the order of a send's check against an
 * approval is the order of their commits.
 *
 * Account settings are read from the database on every send, never kept: a
 * setting changed from any node's CLI applies to the next send.
 */
import type {
  AccountFraudSettings,
  BlockRow,
  ConversionWindow,
  CountryStats,
  Evidence,
  EvidenceQuery,
  FraudSendRow,
  FraudStore,
  ScopeKind,
} from '../../otp/ports/index.ts'
import { POSTGRES } from '../sql/dialect.ts'
import { exactConversion, fraudSql, MINUTE_MS, minutesConversion, toBlock, toCountryStats, toCounts, toSendCounts, toSettings } from '../sql/fraud.ts'
import { ascendingTimes, numOrNull, type Row } from '../sql/values.ts'
import type { Tx } from './client.ts'
import type { TxLocks } from './locks.ts'

const SHARED = fraudSql(POSTGRES)

/** Values per window of CONVERSIONS: the scope, the head's first and last ms, the tail's, the kind, the first and last whole minute. */
const WINDOW_VALUES = 8

/**
 * PostgreSQL's own: rule 4 windows in one statement, each from the shared
 * counts (the partial minutes at both ends exactly, the whole minutes from
 * the counters), where SQLite runs them one by one. $1 the account, then
 * WINDOW_VALUES values per window (windowValues). Memoized per list of kinds.
 */
const conversionsSql = new Map<string, string>()
function conversions(kinds: ScopeKind[]): string {
  const key = kinds.join(',')
  let text = conversionsSql.get(key)
  if (text === undefined) {
    const parts = kinds.map((kind, i) => {
      const p = (n: number) => `$${2 + WINDOW_VALUES * i + n}`
      return `(SELECT h.sends + t.sends + coalesce(w.sends, 0) AS sends, h.approved + t.approved + coalesce(w.approved, 0) AS approved
        FROM (${exactConversion(POSTGRES, kind, p(1), p(2), '$1', p(0))}) h, (${exactConversion(POSTGRES, kind, p(3), p(4), '$1', p(0))}) t,
          (${minutesConversion(p(5), p(6), p(7), '$1', p(0))}) w) c${i}`
    })
    text = `SELECT ${kinds.map((_, i) => `c${i}.sends AS sends${i}, c${i}.approved AS approved${i}`).join(', ')} FROM ${parts.join(', ')}`
    conversionsSql.set(key, text)
  }
  return text
}

/** A window's values for CONVERSIONS: within one minute, all of it is the head (the tail and the whole minutes empty). */
function windowValues(w: ConversionWindow): unknown[] {
  const first = Math.floor(w.from / MINUTE_MS)
  const last = Math.floor(w.to / MINUTE_MS)
  if (first === last) return [w.scope, w.from, w.to, 1, 0, w.kind, 1, 0]
  return [w.scope, w.from, (first + 1) * MINUTE_MS - 1, last * MINUTE_MS, w.to, w.kind, first + 1, last - 1]
}

/** PostgreSQL's own: both scopes of a send in one statement (a VALUES list with column names, which SQLite cannot name). */
const COUNT_MINUTE = `INSERT INTO fraud_minutes (account_id, kind, scope, minute, sends, approved)
  SELECT $1, k.kind, k.scope, $4::bigint, $5::int, $6::int FROM (VALUES ('country', $2::text), ('prefix', $3::text)) AS k(kind, scope)
  WHERE k.kind = 'country' OR $3::text <> $2::text
  ON CONFLICT (account_id, kind, scope, minute) DO UPDATE SET sends = fraud_minutes.sends + excluded.sends, approved = fraud_minutes.approved + excluded.approved`

/** A block's columns from the join `b` of EVIDENCE, as prefixed there. */
const blockColumns = (b: string) =>
  `${b}.kind AS ${b}_kind, ${b}.scope AS ${b}_scope, ${b}.started_at AS ${b}_started_at, ${b}.until AS ${b}_until, ${b}.level AS ${b}_level, ${b}.counts_from AS ${b}_counts_from`

/**
 * PostgreSQL's own: FraudStore.evidence in one statement. $1 the account, $2
 * the country, $3 proven since, $4 the hour since, $5 the prefix in clear
 * (null: none). Rule 3's send times only for a country not proven: the
 * condition is a one-time filter, so a proven country's hour (which may hold
 * thousands of sends) is not scanned.
 */
const EVIDENCE = `SELECT a.id AS account_id, a.allowed_countries, a.daily_credit_limit, a.test_recipients, fc.last_approved_at,
    (SELECT string_agg(s.at::text, ',') FROM fraud_sends s WHERE s.account_id = $1 AND s.country = $2 AND s.at > $4 AND ${POSTGRES.isTrue('s.counted')}
       AND NOT EXISTS (SELECT 1 FROM fraud_countries p WHERE p.account_id = $1 AND p.country = $2 AND p.last_approved_at > $3)) AS country_times,
    ${blockColumns('cb')}, ${blockColumns('pb')}
  FROM (SELECT $1::bigint AS id) k
  LEFT JOIN accounts a ON a.id = k.id
  LEFT JOIN fraud_countries fc ON fc.account_id = k.id AND fc.country = $2
  LEFT JOIN fraud_blocks cb ON cb.account_id = k.id AND cb.kind = 'country' AND cb.scope = $2
  LEFT JOIN fraud_blocks pb ON pb.account_id = k.id AND pb.kind = 'prefix' AND pb.scope = $5::text`

/** The block of EVIDENCE's join `b`, if it found one. */
function evidenceBlock(r: Row, b: string, accountId: number): BlockRow | undefined {
  if (r[`${b}_kind`] == null) return undefined
  return toBlock({
    account_id: accountId,
    kind: r[`${b}_kind`],
    scope: r[`${b}_scope`],
    started_at: r[`${b}_started_at`],
    until: r[`${b}_until`],
    level: r[`${b}_level`],
    counts_from: r[`${b}_counts_from`],
  })
}

export class PgFraudStore implements FraudStore {
  constructor(
    private readonly tx: Tx,
    private readonly locks: TxLocks,
  ) {}

  async accountSettings(accountId: number): Promise<AccountFraudSettings> {
    return toSettings((await this.tx.q(SHARED.settings, [accountId]))[0])
  }

  async evidence(q: EvidenceQuery): Promise<Evidence> {
    const r = (await this.tx.q(EVIDENCE, [q.accountId, q.country, q.provenSince, q.hourSince, q.prefix]))[0]!
    const lastApproval = numOrNull(r.last_approved_at)
    const times = r.country_times as string | null
    return {
      settings: toSettings(r.account_id == null ? undefined : r),
      lastApproval,
      countryTimes:
        lastApproval !== null && lastApproval > q.provenSince
          ? null
          : times === null
            ? []
            : times
                .split(',')
                .map(Number)
                .sort((a, b) => a - b),
      countryBlock: evidenceBlock(r, 'cb', q.accountId),
      prefixBlock: q.prefix === null ? undefined : evidenceBlock(r, 'pb', q.accountId),
    }
  }

  async setAccountSettings(accountId: number, change: Partial<AccountFraudSettings>): Promise<void> {
    if (change.allowedCountries !== undefined) {
      this.tx.exec(SHARED.setAllowedCountries, [accountId, change.allowedCountries === null ? null : change.allowedCountries.join(',')])
    }
    if (change.dailyCreditLimit !== undefined) this.tx.exec(SHARED.setDailyCreditLimit, [accountId, change.dailyCreditLimit])
    if (change.testRecipients !== undefined) this.tx.exec(SHARED.setTestRecipients, [accountId, change.testRecipients])
  }

  async ipSendTimes(ipHash: Uint8Array, since: number): Promise<number[]> {
    await this.locks.named(`fraud-ip:${Buffer.from(ipHash).toString('hex')}`)
    return ascendingTimes(await this.tx.q(SHARED.ipSendTimes, [ipHash, since]), 'at')
  }

  lockCountry(accountId: number, country: string): Promise<boolean> {
    return this.locks.named(countryLock(accountId, country))
  }

  lockScope(accountId: number, kind: ScopeKind, scope: string): Promise<boolean> {
    return this.locks.named(blockLock(accountId, kind, scope))
  }

  async countrySendTimes(accountId: number, country: string, since: number): Promise<number[]> {
    return ascendingTimes(await this.tx.q(SHARED.countrySendTimes, [accountId, country, since]), 'at')
  }

  async lastApproval(accountId: number, country: string): Promise<number | null> {
    return numOrNull((await this.tx.q(SHARED.lastApproval, [accountId, country]))[0]?.last_approved_at)
  }

  async conversion(accountId: number, kind: ScopeKind, scope: string, from: number, to: number): Promise<{ sends: number; approved: number }> {
    return (await this.conversions(accountId, [{ kind, scope, from, to }]))[0]!
  }

  /**
   * Whole minutes from fraud_minutes (at most 1,440 rows for a day), the
   * partial minutes at both ends exactly from fraud_sends, every window in one statement.
   */
  async conversions(accountId: number, windows: ConversionWindow[]): Promise<{ sends: number; approved: number }[]> {
    const rows = await this.tx.q(conversions(windows.map((w) => w.kind)), [accountId, ...windows.flatMap(windowValues)])
    return windows.map((_, i) => toCounts({ sends: rows[0]![`sends${i}`], approved: rows[0]![`approved${i}`] }))
  }

  async block(accountId: number, kind: ScopeKind, scope: string): Promise<BlockRow | undefined> {
    const rows = await this.tx.q(SHARED.block, [accountId, kind, scope])
    return rows[0] === undefined ? undefined : toBlock(rows[0])
  }

  async saveBlock(b: BlockRow): Promise<void> {
    await this.locks.named(blockLock(b.accountId, b.kind, b.scope))
    this.tx.exec(SHARED.saveBlock, [b.accountId, b.kind, b.scope, b.startedAt, b.until, b.level, b.countsFrom])
  }

  async recordSend(s: FraudSendRow): Promise<void> {
    this.tx.exec(SHARED.recordSend, [s.seq, s.accountId, s.at, s.country, s.prefix, s.ipHash, s.counted])
    if (s.counted) await this.countMinute(s, 1, 0)
  }

  async dropSend(seq: number): Promise<void> {
    const row = (await this.tx.q(SHARED.dropSend, [seq]))[0]
    if (row === undefined) return
    const s = toSendCounts(row)
    if (s.counted) await this.countMinute(s, -1, s.approved ? -1 : 0)
  }

  async approved(seq: number, at: number): Promise<void> {
    const row = (await this.tx.q(SHARED.approve, [seq, at]))[0]
    // Only a send that counted proves its country: monitor decides as enforce would, where that send would not exist.
    if (row === undefined) return
    const s = toSendCounts(row)
    if (!s.counted) return
    this.tx.exec(SHARED.prove, [s.accountId, s.country, at])
    // Counted in the minute of the send: the window is about when sends were made.
    await this.countMinute(s, 0, 1)
  }

  /** Both scopes of a send, in one statement; a number whose prefix is its country has one. */
  private async countMinute(s: { accountId: number; at: number; country: string; prefix: string }, sends: number, approved: number): Promise<void> {
    this.tx.exec(COUNT_MINUTE, [s.accountId, s.country, s.prefix, Math.floor(s.at / MINUTE_MS), sends, approved])
  }

  async nthLatestDebit(accountId: number, since: number, n: number): Promise<number | undefined> {
    await this.locks.named(`fraud-account:${accountId}`)
    const rows = await this.tx.q(SHARED.nthLatestDebit, [accountId, since, Math.max(n - 1, 0)])
    return numOrNull(rows[0]?.created_at) ?? undefined
  }

  async activeBlocks(accountId: number | undefined, now: number): Promise<BlockRow[]> {
    return (await this.tx.q(SHARED.activeBlocks, [now, accountId ?? -1])).map(toBlock)
  }

  async countryStats(accountId: number | undefined, since: number): Promise<CountryStats[]> {
    return (await this.tx.q(SHARED.countryStats, [since, accountId ?? -1])).map(toCountryStats)
  }
}

function countryLock(accountId: number, country: string): string {
  return `fraud-country:${accountId}:${country}`
}

function blockLock(accountId: number, kind: ScopeKind, scope: string): string {
  return `fraud-block:${accountId}:${kind}:${scope}`
}
