/**
 * The fraud guard's counters and account settings (otp/ports/fraud.ts
 * FraudStore): the shared statements of store/sql/fraud.ts, prepared once
 * per connection: every sms/voice send runs several.
 *
 * Account settings are read on every send and kept per account until the
 * storage (storage.ts) reports that the database may have changed under them
 * (another connection committed, for instance `otpd accounts set` from a
 * shell, or a rollback): never stale inside a write transaction, so a setting
 * changed from the CLI applies to the next send that starts after its commit.
 */
import type { AccountFraudSettings, BlockRow, CountryStats, FraudSendRow, FraudStore, GuardReads, GuardReadsQuery, ScopeKind } from '../../otp/ports/index.ts'
import { SQLITE } from '../sql/dialect.ts'
import { fraudSql, MINUTE_MS, toBlock, toCountryStats, toCounts, toSendCounts, toSettings } from '../sql/fraud.ts'
import { ascendingTimes, numOrNull } from '../sql/values.ts'
import type { Db } from './db.ts'
import { type Prepared, prepareShared } from './shared-sql.ts'
import type { StaleSource } from './stale.ts'

const SHARED = fraudSql(SQLITE)

export class SqliteFraudStore implements FraudStore {
  private readonly q: Record<keyof typeof SHARED, Prepared>
  private readonly minuteQ
  private readonly settings = new Map<number, AccountFraudSettings>()

  constructor(
    db: Db,
    stale: StaleSource,
    /** Called when this connection changed an account's settings (the send profiles keep a copy: credit-store.ts). */
    private readonly settingsChanged: () => void,
  ) {
    const c = db.$client
    stale.onStale(() => this.settings.clear())
    this.q = prepareShared(c, SHARED)
    // SQLite's own: one scope per statement (PostgreSQL writes both in one, store/pg/fraud-store.ts).
    this.minuteQ = c.prepare<unknown, [number, string, string, number, number, number]>(
      `INSERT INTO fraud_minutes (account_id, kind, scope, minute, sends, approved) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
       ON CONFLICT (account_id, kind, scope, minute) DO UPDATE SET sends = sends + ?5, approved = approved + ?6`,
    )
  }

  async accountSettings(accountId: number): Promise<AccountFraudSettings> {
    let s = this.settings.get(accountId)
    if (s === undefined) {
      s = toSettings(this.q.settings.get(accountId) ?? undefined)
      this.settings.set(accountId, s)
    }
    return s
  }

  async setAccountSettings(accountId: number, change: Partial<AccountFraudSettings>): Promise<void> {
    if (change.allowedCountries !== undefined) {
      this.q.setAllowedCountries.run(accountId, change.allowedCountries === null ? null : change.allowedCountries.join(','))
    }
    if (change.dailyCreditLimit !== undefined) this.q.setDailyCreditLimit.run(accountId, change.dailyCreditLimit)
    if (change.testRecipients !== undefined) this.q.setTestRecipients.run(accountId, change.testRecipients)
    // A rollback of this write fires `stale`, which drops them again.
    this.settings.delete(accountId)
    this.settingsChanged()
  }

  /** SQLite's single writer holds every subject: what was read stands. */
  async lockCountry(): Promise<boolean> {
    return false
  }
  async lockScope(): Promise<boolean> {
    return false
  }

  async ipSendTimes(ipHash: Uint8Array, since: number): Promise<number[]> {
    return ascendingTimes(this.q.ipSendTimes.all(ipHash, since), 'at')
  }
  async countrySendTimes(accountId: number, country: string, since: number): Promise<number[]> {
    return ascendingTimes(this.q.countrySendTimes.all(accountId, country, since), 'at')
  }
  async lastApproval(accountId: number, country: string): Promise<number | null> {
    return numOrNull(this.q.lastApproval.get(accountId, country)?.last_approved_at)
  }
  /**
   * Whole minutes from fraud_minutes (at most 1,440 rows for a day), the
   * partial minutes at both ends exactly from fraud_sends: the cost does not
   * grow with the traffic of the scope.
   */
  async conversion(accountId: number, kind: ScopeKind, scope: string, from: number, to: number): Promise<{ sends: number; approved: number }> {
    const exactQ = kind === 'prefix' ? this.q.prefixConversion : this.q.countryConversion
    const exact = (a: number, b: number) => toCounts(exactQ.get(accountId, scope, a, b))
    const first = Math.floor(from / MINUTE_MS)
    const last = Math.floor(to / MINUTE_MS)
    if (first === last) return exact(from, to)
    const head = exact(from, (first + 1) * MINUTE_MS - 1)
    const tail = exact(last * MINUTE_MS, to)
    const whole = last - first > 1 ? toCounts(this.q.minutesConversion.get(accountId, scope, kind, first + 1, last - 1)) : toCounts(null)
    return { sends: head.sends + tail.sends + whole.sends, approved: head.approved + tail.approved + whole.approved }
  }
  async block(accountId: number, kind: ScopeKind, scope: string): Promise<BlockRow | undefined> {
    const row = this.q.block.get(accountId, kind, scope)
    return row === null ? undefined : toBlock(row)
  }
  /** One read after another: each is a call into the same process. */
  async guardReads(q: GuardReadsQuery): Promise<GuardReads> {
    const lastApproval = await this.lastApproval(q.accountId, q.country)
    const proven = lastApproval !== null && lastApproval > q.provenAfter
    const scopes: GuardReads['scopes'] = []
    for (const s of q.scopes) {
      const block = await this.block(q.accountId, s.kind, s.scope)
      scopes.push({ block, conversion: s.window && (await this.conversion(q.accountId, s.kind, s.counted, s.window.from, s.window.to)) })
    }
    return {
      ipTimes: q.ip && (await this.ipSendTimes(q.ip.hash, q.ip.since)),
      lastApproval,
      countryTimes: proven ? null : await this.countrySendTimes(q.accountId, q.country, q.countrySince),
      scopes,
    }
  }
  async saveBlock(b: BlockRow): Promise<void> {
    this.q.saveBlock.run(b.accountId, b.kind, b.scope, b.startedAt, b.until, b.level, b.countsFrom)
  }
  async recordSend(s: FraudSendRow): Promise<void> {
    this.q.recordSend.run(s.seq, s.accountId, s.at, s.country, s.prefix, s.ipHash, s.counted)
    if (s.counted) this.countMinute(s, 1, 0)
  }
  async dropSend(seq: number): Promise<void> {
    const row = this.q.dropSend.get(seq)
    if (row === null) return
    const s = toSendCounts(row)
    if (s.counted) this.countMinute(s, -1, s.approved ? -1 : 0)
  }
  async approved(seq: number, at: number): Promise<void> {
    const row = this.q.approve.get(seq, at)
    // Only a send that counted proves its country (monitor decides as enforce
    // would, where that send would not exist), and is counted in the minute
    // of the send: the window is about when sends were made.
    if (row === null) return
    const s = toSendCounts(row)
    if (!s.counted) return
    this.q.prove.run(s.accountId, s.country, at)
    this.countMinute(s, 0, 1)
  }
  /** Both scopes of a send; a number whose prefix is its country has one. */
  private countMinute(s: { accountId: number; at: number; country: string; prefix: string }, sends: number, approved: number): void {
    const minute = Math.floor(s.at / MINUTE_MS)
    this.minuteQ.run(s.accountId, 'country', s.country, minute, sends, approved)
    if (s.prefix !== s.country) this.minuteQ.run(s.accountId, 'prefix', s.prefix, minute, sends, approved)
  }
  async nthLatestDebit(accountId: number, since: number, n: number): Promise<number | undefined> {
    return numOrNull(this.q.nthLatestDebit.get(accountId, since, Math.max(n - 1, 0))?.created_at) ?? undefined
  }
  async activeBlocks(accountId: number | undefined, now: number): Promise<BlockRow[]> {
    return this.q.activeBlocks.all(now, accountId ?? -1).map(toBlock)
  }
  async countryStats(accountId: number | undefined, since: number): Promise<CountryStats[]> {
    return this.q.countryStats.all(since, accountId ?? -1).map(toCountryStats)
  }
}
