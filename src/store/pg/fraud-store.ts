/**
 * The fraud guard's counters and account settings on PostgreSQL
 * (otp/fraud.ts FraudStore, as store/sqlite/fraud-store.ts).
 *
 * Exact across nodes: SQLite decides every rule under its single writer;
 * here, inside a write, each rule's first read takes an advisory lock of its
 * subject (store/pg/locks.ts), and the send that passes records itself in
 * the same transaction, before the lock is let go:
 * - rule 2: the end-user IP (its hash is keyed by account);
 * - rule 3: the account's country;
 * - rule 4: the scope (`prefix` or `country`), whose block an unblock from
 *   the CLI also changes under that lock;
 * - rule 5: the account.
 * otp/fraud.ts check takes them in that order on every send. The counters
 * that approvals and refunds move (fraud_minutes, fraud_countries) are
 * atomic upserts and take no lock: the order of a send's check against an
 * approval is the order of their commits.
 *
 * Account settings are read from the database on every send, never kept: a
 * setting changed from any node's CLI applies to the next send.
 */
import type { AccountFraudSettings, BlockRow, CountryStats, FraudSendRow, FraudStore, ScopeKind } from '../../otp/ports/index.ts'
import { num, numOrNull, type Tx } from './client.ts'
import type { TxLocks } from './locks.ts'

type Row = Record<string, unknown>

const MINUTE = 60_000

const BLOCK_COLUMNS = 'account_id, kind, scope, started_at, until, level, counts_from'

export class PgFraudStore implements FraudStore {
  constructor(
    private readonly tx: Tx,
    private readonly locks: TxLocks,
  ) {}

  async accountSettings(accountId: number): Promise<AccountFraudSettings> {
    const rows = await this.tx.q<Row>('SELECT allowed_countries, daily_credit_limit, test_recipients FROM accounts WHERE id = $1', [accountId])
    const row = rows[0]
    const allowed = row?.allowed_countries as string | null | undefined
    return {
      allowedCountries: allowed == null ? null : allowed.split(','),
      dailyCreditLimit: numOrNull(row?.daily_credit_limit),
      testRecipients: row ? row.test_recipients === true : true,
    }
  }

  async setAccountSettings(accountId: number, change: Partial<AccountFraudSettings>): Promise<void> {
    if (change.allowedCountries !== undefined) {
      this.tx.exec('UPDATE accounts SET allowed_countries = $2 WHERE id = $1', [
        accountId,
        change.allowedCountries === null ? null : change.allowedCountries.join(','),
      ])
    }
    if (change.dailyCreditLimit !== undefined) this.tx.exec('UPDATE accounts SET daily_credit_limit = $2 WHERE id = $1', [accountId, change.dailyCreditLimit])
    if (change.testRecipients !== undefined) this.tx.exec('UPDATE accounts SET test_recipients = $2 WHERE id = $1', [accountId, change.testRecipients])
  }

  async ipSendTimes(ipHash: Uint8Array, since: number): Promise<number[]> {
    await this.locks.named(`fraud-ip:${Buffer.from(ipHash).toString('hex')}`)
    const rows = await this.tx.q<Row>('SELECT at FROM fraud_sends WHERE ip_hash = $1 AND at > $2 AND counted AND ip_hash IS NOT NULL ORDER BY at', [
      ipHash,
      since,
    ])
    return rows.map((r) => num(r.at))
  }

  async countrySendTimes(accountId: number, country: string, since: number): Promise<number[]> {
    await this.locks.named(countryLock(accountId, country))
    const rows = await this.tx.q<Row>('SELECT at FROM fraud_sends WHERE account_id = $1 AND country = $2 AND at > $3 AND counted ORDER BY at', [
      accountId,
      country,
      since,
    ])
    return rows.map((r) => num(r.at))
  }

  async lastApproval(accountId: number, country: string): Promise<number | null> {
    await this.locks.named(countryLock(accountId, country))
    const rows = await this.tx.q<Row>('SELECT last_approved_at FROM fraud_countries WHERE account_id = $1 AND country = $2', [accountId, country])
    return numOrNull(rows[0]?.last_approved_at)
  }

  /**
   * Whole minutes from fraud_minutes (at most 1,440 rows for a day), the
   * partial minutes at both ends exactly from fraud_sends, in one statement.
   */
  async conversion(accountId: number, kind: ScopeKind, scope: string, from: number, to: number): Promise<{ sends: number; approved: number }> {
    const column = kind === 'prefix' ? 'prefix' : 'country'
    const exact = (a: string, b: string) =>
      `SELECT count(*) AS sends, count(approved_at) AS approved FROM fraud_sends WHERE account_id = $1 AND ${column} = $2 AND at >= ${a} AND at <= ${b} AND counted`
    const first = Math.floor(from / MINUTE)
    const last = Math.floor(to / MINUTE)
    if (first === last) {
      const rows = await this.tx.q<Row>(exact('$3', '$4'), [accountId, scope, from, to])
      return { sends: num(rows[0]?.sends ?? 0), approved: num(rows[0]?.approved ?? 0) }
    }
    const rows = await this.tx.q<Row>(
      `SELECT h.sends + t.sends + coalesce(w.sends, 0) AS sends, h.approved + t.approved + coalesce(w.approved, 0) AS approved
       FROM (${exact('$3', '$4')}) h, (${exact('$5', '$6')}) t,
         (SELECT sum(sends) AS sends, sum(approved) AS approved FROM fraud_minutes
          WHERE account_id = $1 AND kind = $7 AND scope = $2 AND minute >= $8 AND minute <= $9) w`,
      [accountId, scope, from, (first + 1) * MINUTE - 1, last * MINUTE, to, kind, first + 1, last - 1],
    )
    return { sends: num(rows[0]!.sends), approved: num(rows[0]!.approved) }
  }

  async block(accountId: number, kind: ScopeKind, scope: string): Promise<BlockRow | undefined> {
    await this.locks.named(blockLock(accountId, kind, scope))
    const rows = await this.tx.q<Row>(`SELECT ${BLOCK_COLUMNS} FROM fraud_blocks WHERE account_id = $1 AND kind = $2 AND scope = $3`, [accountId, kind, scope])
    return rows[0] === undefined ? undefined : toBlock(rows[0])
  }

  async saveBlock(b: BlockRow): Promise<void> {
    await this.locks.named(blockLock(b.accountId, b.kind, b.scope))
    this.tx.exec(
      `INSERT INTO fraud_blocks (${BLOCK_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (account_id, kind, scope) DO UPDATE SET started_at = $4, until = $5, level = $6, counts_from = $7`,
      [b.accountId, b.kind, b.scope, b.startedAt, b.until, b.level, b.countsFrom],
    )
  }

  async recordSend(s: FraudSendRow): Promise<void> {
    this.tx.exec('INSERT INTO fraud_sends (seq, account_id, at, country, prefix, ip_hash, counted) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
      s.seq,
      s.accountId,
      s.at,
      s.country,
      s.prefix,
      s.ipHash,
      s.counted,
    ])
    if (s.counted) await this.countMinute(s, 1, 0)
  }

  async dropSend(seq: number): Promise<void> {
    const rows = await this.tx.q<Row>('DELETE FROM fraud_sends WHERE seq = $1 RETURNING account_id, at, country, prefix, counted, approved_at', [seq])
    const row = rows[0]
    if (row === undefined || row.counted !== true) return
    await this.countMinute(sendOf(row), -1, row.approved_at === null ? 0 : -1)
  }

  async approved(seq: number, at: number): Promise<void> {
    const rows = await this.tx.q<Row>(
      'UPDATE fraud_sends SET approved_at = $2 WHERE seq = $1 AND approved_at IS NULL RETURNING account_id, at, country, prefix, counted',
      [seq, at],
    )
    const row = rows[0]
    // Only a send that counted proves its country: monitor decides as enforce would, where that send would not exist.
    if (row === undefined || row.counted !== true) return
    this.tx.exec(
      `INSERT INTO fraud_countries (account_id, country, last_approved_at) VALUES ($1, $2, $3)
       ON CONFLICT (account_id, country) DO UPDATE SET last_approved_at = greatest(fraud_countries.last_approved_at, excluded.last_approved_at)`,
      [row.account_id, row.country, at],
    )
    // Counted in the minute of the send: the window is about when sends were made.
    await this.countMinute(sendOf(row), 0, 1)
  }

  /** Both scopes of a send, in one statement; a number whose prefix is its country has one. */
  private async countMinute(s: { accountId: number; at: number; country: string; prefix: string }, sends: number, approved: number): Promise<void> {
    const minute = Math.floor(s.at / MINUTE)
    this.tx.exec(
      `INSERT INTO fraud_minutes (account_id, kind, scope, minute, sends, approved)
       SELECT $1, k.kind, k.scope, $4::bigint, $5::int, $6::int FROM (VALUES ('country', $2::text), ('prefix', $3::text)) AS k(kind, scope)
       WHERE k.kind = 'country' OR $3::text <> $2::text
       ON CONFLICT (account_id, kind, scope, minute) DO UPDATE SET sends = fraud_minutes.sends + excluded.sends, approved = fraud_minutes.approved + excluded.approved`,
      [s.accountId, s.country, s.prefix, minute, sends, approved],
    )
  }

  async nthLatestDebit(accountId: number, since: number, n: number): Promise<number | undefined> {
    await this.locks.named(`fraud-account:${accountId}`)
    // Newest first along credit_ledger_send_debits: it reads at most n rows (and their refund look-ups).
    const rows = await this.tx.q<Row>(
      `SELECT d.created_at AS at FROM credit_ledger d
       WHERE d.account_id = $1 AND d.kind = 'debit' AND d.verification_id IS NOT NULL AND d.created_at > $2
         AND NOT EXISTS (SELECT 1 FROM credit_ledger r WHERE r.verification_id = d.verification_id AND r.kind = 'refund')
       ORDER BY d.created_at DESC LIMIT 1 OFFSET greatest($3::int - 1, 0)`,
      [accountId, since, n],
    )
    return numOrNull(rows[0]?.at) ?? undefined
  }

  async activeBlocks(accountId: number | undefined, now: number): Promise<BlockRow[]> {
    const rows = await this.tx.q<Row>(
      `SELECT ${BLOCK_COLUMNS} FROM fraud_blocks WHERE until > $1 AND ($2::int < 0 OR account_id = $2::int)
       ORDER BY account_id, until DESC, kind COLLATE "C", scope COLLATE "C"`,
      [now, accountId ?? -1],
    )
    return rows.map(toBlock)
  }

  async countryStats(accountId: number | undefined, since: number): Promise<CountryStats[]> {
    const rows = await this.tx.q<Row>(
      `SELECT account_id, country, count(*) AS sends, count(approved_at) AS approved FROM fraud_sends
       WHERE at > $1 AND ($2::int < 0 OR account_id = $2::int) GROUP BY account_id, country ORDER BY account_id, sends DESC, country COLLATE "C"`,
      [since, accountId ?? -1],
    )
    return rows.map((r) => ({ accountId: num(r.account_id), country: r.country as string, sends: num(r.sends), approved: num(r.approved) }))
  }
}

function countryLock(accountId: number, country: string): string {
  return `fraud-country:${accountId}:${country}`
}

function blockLock(accountId: number, kind: ScopeKind, scope: string): string {
  return `fraud-block:${accountId}:${kind}:${scope}`
}

function sendOf(r: Row): { accountId: number; at: number; country: string; prefix: string } {
  return { accountId: num(r.account_id), at: num(r.at), country: r.country as string, prefix: r.prefix as string }
}

function toBlock(r: Row): BlockRow {
  return {
    accountId: num(r.account_id),
    kind: r.kind as ScopeKind,
    scope: r.scope as string,
    startedAt: numOrNull(r.started_at),
    until: numOrNull(r.until),
    level: num(r.level),
    countsFrom: num(r.counts_from),
  }
}
