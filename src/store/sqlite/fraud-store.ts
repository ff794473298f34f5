/**
 * The fraud guard's counters and account settings (otp/fraud.ts FraudStore).
 * Plain bun:sqlite prepared statements: every sms/voice send runs several.
 *
 * Account settings are read on every send and kept per account until the
 * storage (storage.ts) reports that the database may have changed under them
 * (another connection committed, for instance `otpd accounts set` from a
 * shell, or a rollback): never stale inside a write transaction, so a setting
 * changed from the CLI applies to the next send that starts after its commit.
 */
import type { AccountFraudSettings, BlockRow, CountryStats, FraudSendRow, FraudStore, ScopeKind } from '../../otp/ports/index.ts'
import type { Db } from './db.ts'
import type { StaleSource } from './stale.ts'

interface SettingsRow {
  allowedCountries: string | null
  dailyCreditLimit: number | null
  testRecipients: number
}

type StoredBlock = Omit<BlockRow, 'kind'> & { kind: string }
type SendRow = { accountId: number; at: number; country: string; prefix: string; counted: number }

export class SqliteFraudStore implements FraudStore {
  private readonly settingsQ
  private readonly ipQ
  private readonly countryQ
  private readonly lastApprovalQ
  private readonly conversionQ
  private readonly blockQ
  private readonly saveBlockQ
  private readonly recordQ
  private readonly approveQ
  private readonly dropQ
  private readonly sendRowQ
  private readonly minuteQ
  private readonly minutesSumQ
  private readonly proveQ
  private readonly debitsQ
  private readonly db: Db
  private readonly settings = new Map<number, AccountFraudSettings>()

  constructor(db: Db, stale: StaleSource) {
    this.db = db
    const c = db.$client
    stale.onStale(() => this.settings.clear())
    this.settingsQ = c.prepare<SettingsRow, [number]>(
      'SELECT allowed_countries AS allowedCountries, daily_credit_limit AS dailyCreditLimit, test_recipients AS testRecipients FROM accounts WHERE id = ?1',
    )
    this.ipQ = c.prepare<{ at: number }, [Uint8Array, number]>(
      'SELECT at FROM fraud_sends WHERE ip_hash = ?1 AND at > ?2 AND counted = 1 AND ip_hash IS NOT NULL',
    )
    this.countryQ = c.prepare<{ at: number }, [number, string, number]>(
      'SELECT at FROM fraud_sends WHERE account_id = ?1 AND country = ?2 AND at > ?3 AND counted = 1',
    )
    this.lastApprovalQ = c.prepare<{ at: number }, [number, string]>(
      'SELECT last_approved_at AS at FROM fraud_countries WHERE account_id = ?1 AND country = ?2',
    )
    // Exact counts, used for the partial minutes at the ends of a window only.
    const conversion = (column: string) =>
      c.prepare<{ sends: number; approved: number }, [number, string, number, number]>(
        `SELECT count(*) AS sends, count(approved_at) AS approved FROM fraud_sends
         WHERE account_id = ?1 AND ${column} = ?2 AND at >= ?3 AND at <= ?4 AND counted = 1`,
      )
    this.conversionQ = { prefix: conversion('prefix'), country: conversion('country') }
    this.minutesSumQ = c.prepare<{ sends: number | null; approved: number | null }, [number, string, string, number, number]>(
      `SELECT sum(sends) AS sends, sum(approved) AS approved FROM fraud_minutes
       WHERE account_id = ?1 AND kind = ?2 AND scope = ?3 AND minute >= ?4 AND minute <= ?5`,
    )
    this.minuteQ = c.prepare<unknown, [number, string, string, number, number, number]>(
      `INSERT INTO fraud_minutes (account_id, kind, scope, minute, sends, approved) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
       ON CONFLICT (account_id, kind, scope, minute) DO UPDATE SET sends = sends + ?5, approved = approved + ?6`,
    )
    this.sendRowQ = c.prepare<{ accountId: number; at: number; country: string; prefix: string; counted: number; approvedAt: number | null }, [number]>(
      'SELECT account_id AS accountId, at, country, prefix, counted, approved_at AS approvedAt FROM fraud_sends WHERE seq = ?1',
    )
    this.blockQ = c.prepare<StoredBlock, [number, string, string]>(
      `SELECT account_id AS accountId, kind, scope, started_at AS startedAt, until, level, counts_from AS countsFrom
       FROM fraud_blocks WHERE account_id = ?1 AND kind = ?2 AND scope = ?3`,
    )
    this.saveBlockQ = c.prepare<unknown, [number, string, string, number | null, number | null, number, number]>(
      `INSERT INTO fraud_blocks (account_id, kind, scope, started_at, until, level, counts_from) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
       ON CONFLICT (account_id, kind, scope) DO UPDATE SET started_at = ?4, until = ?5, level = ?6, counts_from = ?7`,
    )
    this.recordQ = c.prepare<unknown, [number, number, number, string, string, Uint8Array | null, number]>(
      'INSERT INTO fraud_sends (seq, account_id, at, country, prefix, ip_hash, counted) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)',
    )
    this.dropQ = c.prepare<unknown, [number]>('DELETE FROM fraud_sends WHERE seq = ?1')
    // The row as approved, in the same statement: no second look-up for what `approved` does next.
    this.approveQ = c.prepare<SendRow, [number, number]>(
      'UPDATE fraud_sends SET approved_at = ?2 WHERE seq = ?1 AND approved_at IS NULL RETURNING account_id AS accountId, at, country, prefix, counted',
    )
    this.proveQ = c.prepare<unknown, [number, string, number]>(
      `INSERT INTO fraud_countries (account_id, country, last_approved_at) VALUES (?1, ?2, ?3)
       ON CONFLICT (account_id, country) DO UPDATE SET last_approved_at = max(last_approved_at, excluded.last_approved_at)`,
    )
    // Newest first along credit_ledger_send_debits: it reads at most n rows (and their refund look-ups).
    this.debitsQ = c.prepare<{ at: number }, [number, number, number]>(
      `SELECT d.created_at AS at FROM credit_ledger d
       WHERE d.account_id = ?1 AND d.kind = 'debit' AND d.verification_id IS NOT NULL AND d.created_at > ?2
         AND NOT EXISTS (SELECT 1 FROM credit_ledger r WHERE r.verification_id = d.verification_id AND r.kind = 'refund')
       ORDER BY d.created_at DESC LIMIT 1 OFFSET ?3 - 1`,
    )
  }

  async accountSettings(accountId: number): Promise<AccountFraudSettings> {
    let s = this.settings.get(accountId)
    if (s === undefined) {
      const row = this.settingsQ.get(accountId)
      s = {
        allowedCountries: row?.allowedCountries == null ? null : row.allowedCountries.split(','),
        dailyCreditLimit: row?.dailyCreditLimit ?? null,
        testRecipients: row ? row.testRecipients === 1 : true,
      }
      this.settings.set(accountId, s)
    }
    return s
  }

  async setAccountSettings(accountId: number, change: Partial<AccountFraudSettings>): Promise<void> {
    const c = this.db.$client
    if (change.allowedCountries !== undefined) {
      c.run('UPDATE accounts SET allowed_countries = ?2 WHERE id = ?1', [
        accountId,
        change.allowedCountries === null ? null : change.allowedCountries.join(','),
      ])
    }
    if (change.dailyCreditLimit !== undefined) c.run('UPDATE accounts SET daily_credit_limit = ?2 WHERE id = ?1', [accountId, change.dailyCreditLimit])
    if (change.testRecipients !== undefined) c.run('UPDATE accounts SET test_recipients = ?2 WHERE id = ?1', [accountId, change.testRecipients ? 1 : 0])
    // A rollback of this write fires `stale`, which drops them again.
    this.settings.delete(accountId)
  }

  async ipSendTimes(ipHash: Uint8Array, since: number): Promise<number[]> {
    return ascending(this.ipQ.all(ipHash, since))
  }
  async countrySendTimes(accountId: number, country: string, since: number): Promise<number[]> {
    return ascending(this.countryQ.all(accountId, country, since))
  }
  async lastApproval(accountId: number, country: string): Promise<number | null> {
    return this.lastApprovalQ.get(accountId, country)?.at ?? null
  }
  /**
   * Whole minutes from fraud_minutes (at most 1,440 rows for a day), the
   * partial minutes at both ends exactly from fraud_sends: the cost does not
   * grow with the traffic of the scope.
   */
  async conversion(accountId: number, kind: ScopeKind, scope: string, from: number, to: number): Promise<{ sends: number; approved: number }> {
    const exact = (a: number, b: number) => this.conversionQ[kind].get(accountId, scope, a, b) ?? { sends: 0, approved: 0 }
    const first = Math.floor(from / MINUTE)
    const last = Math.floor(to / MINUTE)
    if (first === last) return exact(from, to)
    const head = exact(from, (first + 1) * MINUTE - 1)
    const tail = exact(last * MINUTE, to)
    const whole = last - first > 1 ? this.minutesSumQ.get(accountId, kind, scope, first + 1, last - 1) : null
    return {
      sends: head.sends + tail.sends + (whole?.sends ?? 0),
      approved: head.approved + tail.approved + (whole?.approved ?? 0),
    }
  }
  async block(accountId: number, kind: ScopeKind, scope: string): Promise<BlockRow | undefined> {
    const row = this.blockQ.get(accountId, kind, scope)
    return row === null ? undefined : (row as BlockRow)
  }
  async saveBlock(b: BlockRow): Promise<void> {
    this.saveBlockQ.run(b.accountId, b.kind, b.scope, b.startedAt, b.until, b.level, b.countsFrom)
  }
  async recordSend(s: FraudSendRow): Promise<void> {
    this.recordQ.run(s.seq, s.accountId, s.at, s.country, s.prefix, s.ipHash, s.counted ? 1 : 0)
    if (s.counted) this.countMinute(s, 1, 0)
  }
  async dropSend(seq: number): Promise<void> {
    const row = this.sendRowQ.get(seq)
    if (!row) return
    this.dropQ.run(seq)
    if (row.counted === 1) this.countMinute(row, -1, row.approvedAt === null ? 0 : -1)
  }
  async approved(seq: number, at: number): Promise<void> {
    const row = this.approveQ.get(seq, at)
    // Only a send that counted proves its country (monitor decides as enforce
    // would, where that send would not exist), and is counted in the minute
    // of the send: the window is about when sends were made.
    if (row?.counted !== 1) return
    this.proveQ.run(row.accountId, row.country, at)
    this.countMinute(row, 0, 1)
  }
  /** Both scopes of a send; a number whose prefix is its country has one. */
  private countMinute(s: { accountId: number; at: number; country: string; prefix: string }, sends: number, approved: number): void {
    const minute = Math.floor(s.at / MINUTE)
    this.minuteQ.run(s.accountId, 'country', s.country, minute, sends, approved)
    if (s.prefix !== s.country) this.minuteQ.run(s.accountId, 'prefix', s.prefix, minute, sends, approved)
  }
  async nthLatestDebit(accountId: number, since: number, n: number): Promise<number | undefined> {
    return this.debitsQ.get(accountId, since, n)?.at
  }
  async activeBlocks(accountId: number | undefined, now: number): Promise<BlockRow[]> {
    const rows = this.db.$client
      .query<StoredBlock, [number, number]>(
        `SELECT account_id AS accountId, kind, scope, started_at AS startedAt, until, level, counts_from AS countsFrom
         FROM fraud_blocks WHERE until > ?1 AND (?2 < 0 OR account_id = ?2) ORDER BY account_id, until DESC, kind, scope`,
      )
      .all(now, accountId ?? -1)
    return rows as BlockRow[]
  }
  async countryStats(accountId: number | undefined, since: number): Promise<CountryStats[]> {
    return this.db.$client
      .query<CountryStats, [number, number]>(
        `SELECT account_id AS accountId, country, count(*) AS sends, count(approved_at) AS approved FROM fraud_sends
         WHERE at > ?1 AND (?2 < 0 OR account_id = ?2) GROUP BY account_id, country ORDER BY account_id, sends DESC, country`,
      )
      .all(since, accountId ?? -1)
  }
}

const MINUTE = 60_000

/** Sorted here: an ORDER BY costs SQLite a sorter even for no rows (as verification-store.ts). */
function ascending(rows: { at: number }[]): number[] {
  return rows.map((r) => r.at).sort((a, b) => a - b)
}
