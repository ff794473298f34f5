/**
 * The fraud guard's counters and account settings on PostgreSQL
 * (otp/ports/fraud.ts FraudStore): the shared statements of store/sql/fraud.ts.
 * Inside a write a rule takes an advisory lock of its subject (store/pg/locks.ts)
 * and the send that passes records itself before the lock is let go: the IP
 * (rule 2) and the account (rule 5) on their first read, the country (rule 3,
 * lockCountry) and the scope (rule 4, lockScope) when otp/fraud.ts asks
 * (docs/multi-node.md#the-fraud-guard). Counters moved by approvals and refunds
 * are atomic upserts and take no lock. Account settings are read on every send,
 * never kept, so a change from any node's CLI applies to the next send.
 */
import type { AccountFraudSettings, BlockRow, CountryStats, FraudSendRow, FraudStore, GuardReads, GuardReadsQuery, ScopeKind } from '../../otp/ports/index.ts'
import { POSTGRES } from '../sql/dialect.ts'
import { exactConversion, fraudSql, MINUTE_MS, minutesConversion, toBlock, toCountryStats, toCounts, toSendCounts, toSettings } from '../sql/fraud.ts'
import { ascendingTimes, numOrNull } from '../sql/values.ts'
import type { Tx } from './client.ts'
import type { TxLocks } from './locks.ts'

const SHARED = fraudSql(POSTGRES)

/**
 * PostgreSQL's own: a window across minutes in one query, from the shared
 * counts (the partial minutes at both ends exactly, the whole minutes from
 * the counters), where SQLite runs them one by one. `p` names its
 * parameters: the scope, the head's [from, to], the tail's [from, to], the
 * whole minutes [first, last] (windowParams).
 */
function conversionAcross(kind: ScopeKind, p: string[]): string {
  const [scope, from, headTo, tailFrom, to, first, last] = p as [string, string, string, string, string, string, string]
  return `SELECT h.sends + t.sends + coalesce(w.sends, 0) AS sends, h.approved + t.approved + coalesce(w.approved, 0) AS approved
   FROM (${exactConversion(POSTGRES, kind, from, headTo, scope)}) h, (${exactConversion(POSTGRES, kind, tailFrom, to, scope)}) t,
     (${minutesConversion(`'${kind}'`, first, last, scope)}) w`
}
const params = (from: number) => Array.from({ length: 7 }, (_, i) => `$${from + i}`)
const CONVERSION_ACROSS = { prefix: conversionAcross('prefix', params(2)), country: conversionAcross('country', params(2)) }

/**
 * A window's parameters for conversionAcross: its partial minutes at both
 * ends and its whole minutes between. Within one minute the head is the
 * whole window and the tail and the whole minutes are empty.
 */
function windowParams(from: number, to: number): number[] {
  const first = Math.floor(from / MINUTE_MS)
  const last = Math.floor(to / MINUTE_MS)
  if (first === last) return [from, to, to + 1, to, first + 1, last - 1]
  return [from, (first + 1) * MINUTE_MS - 1, last * MINUTE_MS, to, first + 1, last - 1]
}

/** GUARD_READS's parameters for `q`, whose scopes are the country's, then the prefix's if it has one. */
export function guardReadsParams(q: GuardReadsQuery): unknown[] {
  const [country, prefix, ...more] = q.scopes
  if (
    country?.kind !== 'country' ||
    country.scope !== q.country ||
    country.counted !== q.country ||
    (prefix !== undefined && prefix.kind !== 'prefix') ||
    more.length > 0
  ) {
    throw new Error('guardReads: the country scope, then at most the prefix scope')
  }
  const window = (w: { from: number; to: number } | null | undefined) => (w ? windowParams(w.from, w.to) : [null, null, null, null, null, null])
  return [
    q.accountId,
    q.country,
    q.ip?.hash ?? null,
    q.ip?.since ?? null,
    q.countrySince,
    q.provenAfter,
    ...window(country.window),
    prefix?.scope ?? null,
    prefix?.counted ?? null,
    ...window(prefix?.window),
  ]
}

const BLOCK_ARRAY = 'SELECT json_build_array(started_at, until, level, counts_from) FROM fraud_blocks WHERE account_id = $1'
const COUNTS_ARRAY = (kind: ScopeKind, p: string[]) => `SELECT json_build_array(c.sends, c.approved) FROM (${conversionAcross(kind, p)}) c`

/**
 * PostgreSQL's own: the reads of rules 2 to 4 of a send in one statement
 * (guardReads). Each read behind a CASE is made only when its parameter
 * asks for it: the IP's hour ($3 not null), the country's hour (its last
 * approval none or not after $6), a conversion (its `from` not null), the
 * prefix's block ($13 not null).
 */
export const GUARD_READS = `WITH a AS (SELECT last_approved_at FROM fraud_countries WHERE account_id = $1 AND country = $2)
SELECT (SELECT last_approved_at FROM a) AS last_approved_at,
  CASE WHEN $3::bytea IS NOT NULL THEN ARRAY(SELECT at FROM fraud_sends WHERE ip_hash = $3 AND at > $4::bigint AND counted AND ip_hash IS NOT NULL) END AS ip_times,
  CASE WHEN NOT EXISTS (SELECT 1 FROM a WHERE last_approved_at > $6::bigint)
    THEN ARRAY(SELECT at FROM fraud_sends WHERE account_id = $1 AND country = $2 AND at > $5::bigint AND counted) END AS country_times,
  (${BLOCK_ARRAY} AND kind = 'country' AND scope = $2) AS country_block,
  CASE WHEN $7::bigint IS NOT NULL THEN (${COUNTS_ARRAY('country', ['$2', '$7', '$8::bigint', '$9::bigint', '$10::bigint', '$11::bigint', '$12::bigint'])}) END AS country_counts,
  CASE WHEN $13::text IS NOT NULL THEN (${BLOCK_ARRAY} AND kind = 'prefix' AND scope = $13) END AS prefix_block,
  CASE WHEN $15::bigint IS NOT NULL
    THEN (${COUNTS_ARRAY('prefix', ['$14::text', '$15', '$16::bigint', '$17::bigint', '$18::bigint', '$19::bigint', '$20::bigint'])}) END AS prefix_counts`

/** PostgreSQL's own: both scopes of a send in one statement (a VALUES list with column names, which SQLite cannot name). */
const COUNT_MINUTE = `INSERT INTO fraud_minutes (account_id, kind, scope, minute, sends, approved)
  SELECT $1, k.kind, k.scope, $4::bigint, $5::int, $6::int FROM (VALUES ('country', $2::text), ('prefix', $3::text)) AS k(kind, scope)
  WHERE k.kind = 'country' OR $3::text <> $2::text
  ON CONFLICT (account_id, kind, scope, minute) DO UPDATE SET sends = fraud_minutes.sends + excluded.sends, approved = fraud_minutes.approved + excluded.approved`

/**
 * PostgreSQL's own: `approved` in one statement. The send is approved once
 * (store/sql/fraud.ts approve); only a send that counted proves its country
 * (monitor decides as enforce would, where that send would not exist) and
 * counts an approval in its minute's counters (the minute of the send: the
 * window is about when sends were made), both scopes as COUNT_MINUTE.
 */
const APPROVE = `WITH s AS (
    UPDATE fraud_sends SET approved_at = $2 WHERE seq = $1 AND approved_at IS NULL RETURNING account_id, at, country, prefix, counted
  ), proven AS (
    INSERT INTO fraud_countries (account_id, country, last_approved_at) SELECT account_id, country, $2 FROM s WHERE counted
    ON CONFLICT (account_id, country) DO UPDATE SET last_approved_at = greatest(fraud_countries.last_approved_at, excluded.last_approved_at)
  )
  INSERT INTO fraud_minutes (account_id, kind, scope, minute, sends, approved)
  SELECT s.account_id, k.kind, k.scope, s.at / ${MINUTE_MS}, 0, 1 FROM s, LATERAL (VALUES ('country', s.country), ('prefix', s.prefix)) AS k(kind, scope)
  WHERE s.counted AND (k.kind = 'country' OR s.prefix <> s.country)
  ON CONFLICT (account_id, kind, scope, minute) DO UPDATE SET sends = fraud_minutes.sends + excluded.sends, approved = fraud_minutes.approved + excluded.approved`

export class PgFraudStore implements FraudStore {
  constructor(
    private readonly tx: Tx,
    private readonly locks: TxLocks,
  ) {}

  async accountSettings(accountId: number): Promise<AccountFraudSettings> {
    return toSettings((await this.tx.q(SHARED.settings, [accountId]))[0])
  }

  async setAccountSettings(accountId: number, change: Partial<AccountFraudSettings>): Promise<void> {
    if (change.allowedCountries !== undefined) {
      this.tx.exec(SHARED.setAllowedCountries, [accountId, change.allowedCountries === null ? null : change.allowedCountries.join(',')])
    }
    if (change.dailyCreditLimit !== undefined) this.tx.exec(SHARED.setDailyCreditLimit, [accountId, change.dailyCreditLimit])
    if (change.testRecipients !== undefined) this.tx.exec(SHARED.setTestRecipients, [accountId, change.testRecipients])
  }

  async ipSendTimes(ipHash: Uint8Array, since: number): Promise<number[]> {
    await this.locks.named(ipLock(ipHash))
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

  /**
   * Whole minutes from fraud_minutes (at most 1,440 rows for a day), the
   * partial minutes at both ends exactly from fraud_sends, in one statement.
   */
  async conversion(accountId: number, kind: ScopeKind, scope: string, from: number, to: number): Promise<{ sends: number; approved: number }> {
    if (Math.floor(from / MINUTE_MS) === Math.floor(to / MINUTE_MS)) {
      const rows = await this.tx.q(kind === 'prefix' ? SHARED.prefixConversion : SHARED.countryConversion, [accountId, scope, from, to])
      return toCounts(rows[0])
    }
    return toCounts((await this.tx.q(CONVERSION_ACROSS[kind], [accountId, scope, ...windowParams(from, to)]))[0])
  }

  async guardReads(q: GuardReadsQuery): Promise<GuardReads> {
    if (q.ip) await this.locks.named(ipLock(q.ip.hash))
    const row = (await this.tx.q(GUARD_READS, guardReadsParams(q)))[0]!
    const [country, prefix] = q.scopes as [GuardReadsQuery['scopes'][0], GuardReadsQuery['scopes'][0] | undefined]
    const block = (kind: ScopeKind, scope: string, a: unknown) => {
      if (a == null) return undefined
      const [startedAt, until, level, countsFrom] = a as (number | null)[]
      return toBlock({ account_id: q.accountId, kind, scope, started_at: startedAt, until, level, counts_from: countsFrom })
    }
    const counts = (a: unknown) => {
      if (a == null) return null
      const [sends, approved] = a as number[]
      return toCounts({ sends, approved })
    }
    const times = (a: unknown) => (a == null ? null : (a as unknown[]).map(Number).sort((x, y) => x - y))
    const scopes: GuardReads['scopes'] = [{ block: block('country', country.scope, row.country_block), conversion: counts(row.country_counts) }]
    if (prefix) scopes.push({ block: block('prefix', prefix.scope, row.prefix_block), conversion: counts(row.prefix_counts) })
    return { ipTimes: times(row.ip_times), lastApproval: numOrNull(row.last_approved_at), countryTimes: times(row.country_times), scopes }
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

  /** One statement, read by nothing (APPROVE): pipelined, no round trip. */
  async approved(seq: number, at: number): Promise<void> {
    this.tx.exec(APPROVE, [seq, at])
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

function ipLock(ipHash: Uint8Array): string {
  return `fraud-ip:${Buffer.from(ipHash).toString('hex')}`
}

function countryLock(accountId: number, country: string): string {
  return `fraud-country:${accountId}:${country}`
}

function blockLock(accountId: number, kind: ScopeKind, scope: string): string {
  return `fraud-block:${accountId}:${kind}:${scope}`
}
