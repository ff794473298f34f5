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
import type { AccountFraudSettings, BlockRow, CountryStats, FraudSendRow, FraudStore, ScopeKind } from '../../otp/ports/index.ts'
import { POSTGRES } from '../sql/dialect.ts'
import { exactConversion, fraudSql, MINUTE_MS, minutesConversion, toBlock, toCountryStats, toCounts, toSendCounts, toSettings } from '../sql/fraud.ts'
import { ascendingTimes, numOrNull } from '../sql/values.ts'
import type { Tx } from './client.ts'
import type { TxLocks } from './locks.ts'

const SHARED = fraudSql(POSTGRES)

/**
 * PostgreSQL's own: a window across minutes in one statement, from the shared
 * counts (the partial minutes at both ends exactly, the whole minutes from
 * the counters), where SQLite runs them one by one.
 */
const CONVERSION = (kind: ScopeKind) =>
  `SELECT h.sends + t.sends + coalesce(w.sends, 0) AS sends, h.approved + t.approved + coalesce(w.approved, 0) AS approved
   FROM (${exactConversion(POSTGRES, kind, '$3', '$4')}) h, (${exactConversion(POSTGRES, kind, '$5', '$6')}) t,
     (${minutesConversion('$7', '$8', '$9')}) w`
const CONVERSION_ACROSS = { prefix: CONVERSION('prefix'), country: CONVERSION('country') }

/** PostgreSQL's own: both scopes of a send in one statement (a VALUES list with column names, which SQLite cannot name). */
const COUNT_MINUTE = `INSERT INTO fraud_minutes (account_id, kind, scope, minute, sends, approved)
  SELECT $1, k.kind, k.scope, $4::bigint, $5::int, $6::int FROM (VALUES ('country', $2::text), ('prefix', $3::text)) AS k(kind, scope)
  WHERE k.kind = 'country' OR $3::text <> $2::text
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

  /**
   * Whole minutes from fraud_minutes (at most 1,440 rows for a day), the
   * partial minutes at both ends exactly from fraud_sends, in one statement.
   */
  async conversion(accountId: number, kind: ScopeKind, scope: string, from: number, to: number): Promise<{ sends: number; approved: number }> {
    const first = Math.floor(from / MINUTE_MS)
    const last = Math.floor(to / MINUTE_MS)
    if (first === last) {
      const rows = await this.tx.q(kind === 'prefix' ? SHARED.prefixConversion : SHARED.countryConversion, [accountId, scope, from, to])
      return toCounts(rows[0])
    }
    const rows = await this.tx.q(CONVERSION_ACROSS[kind], [
      accountId,
      scope,
      from,
      (first + 1) * MINUTE_MS - 1,
      last * MINUTE_MS,
      to,
      kind,
      first + 1,
      last - 1,
    ])
    return toCounts(rows[0])
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
