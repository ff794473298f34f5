/**
 * The fraud guard's counters and account settings (otp/ports/fraud.ts
 * FraudStore): the statements both engines run, and their row mappers. Only
 * counted sends feed the rules' windows and rule 4's conversion; a dropped
 * send (no provider took it) counts toward nothing; a refunded debit is no
 * send for rule 5.
 *
 * Each engine keeps its own upsert of the per-minute counters
 * (fraud_minutes): PostgreSQL writes both scopes of a send in one statement
 * over a VALUES list with column names, which SQLite cannot name.
 */
import type { AccountFraudSettings, BlockRow, CountryStats, ScopeKind } from '../../otp/ports/index.ts'
import type { Dialect } from './dialect.ts'
import { bool, num, numOrNull, type Row } from './values.ts'

export const MINUTE_MS = 60_000

const BLOCK_COLUMNS = 'account_id, kind, scope, started_at, until, level, counts_from'
/** The send row `dropSend` and `approved` answer (they run the minute counters from it). */
const SEND_COLUMNS = 'account_id, at, country, prefix, counted, approved_at'

/**
 * Counted sends of scope `scope` (a `column` value) of account $1 made in
 * [`from`, `to`], and how many were approved: exact, for the partial minutes
 * at the ends of a window.
 */
export function exactConversion(d: Dialect, column: ScopeKind, from: string, to: string, scope = '$2'): string {
  return `SELECT count(*) AS sends, count(approved_at) AS approved FROM fraud_sends
    WHERE account_id = $1 AND ${column} = ${scope} AND at >= ${from} AND at <= ${to} AND ${d.isTrue('counted')}`
}

/** The whole minutes [`first`, `last`] of scope `scope` of kind `kind` of account $1, from the per-minute counters. */
export function minutesConversion(kind: string, first: string, last: string, scope = '$2'): string {
  return `SELECT sum(sends) AS sends, sum(approved) AS approved FROM fraud_minutes
    WHERE account_id = $1 AND kind = ${kind} AND scope = ${scope} AND minute >= ${first} AND minute <= ${last}`
}

export function fraudSql(d: Dialect) {
  return {
    settings: 'SELECT allowed_countries, daily_credit_limit, test_recipients FROM accounts WHERE id = $1',
    setAllowedCountries: 'UPDATE accounts SET allowed_countries = $2 WHERE id = $1',
    setDailyCreditLimit: 'UPDATE accounts SET daily_credit_limit = $2 WHERE id = $1',
    setTestRecipients: 'UPDATE accounts SET test_recipients = $2 WHERE id = $1',
    // No ORDER BY in the two windows: the caller sorts (an ORDER BY costs SQLite a sorter even for no rows).
    ipSendTimes: `SELECT at FROM fraud_sends WHERE ip_hash = $1 AND at > $2 AND ${d.isTrue('counted')} AND ip_hash IS NOT NULL`,
    countrySendTimes: `SELECT at FROM fraud_sends WHERE account_id = $1 AND country = $2 AND at > $3 AND ${d.isTrue('counted')}`,
    lastApproval: 'SELECT last_approved_at FROM fraud_countries WHERE account_id = $1 AND country = $2',
    countryConversion: exactConversion(d, 'country', '$3', '$4'),
    prefixConversion: exactConversion(d, 'prefix', '$3', '$4'),
    /** $3 the kind, $4 and $5 the first and last minute. */
    minutesConversion: minutesConversion('$3', '$4', '$5'),
    block: `SELECT ${BLOCK_COLUMNS} FROM fraud_blocks WHERE account_id = $1 AND kind = $2 AND scope = $3`,
    saveBlock: `INSERT INTO fraud_blocks (${BLOCK_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
      ON CONFLICT (account_id, kind, scope) DO UPDATE SET started_at = $4, until = $5, level = $6, counts_from = $7`,
    recordSend: 'INSERT INTO fraud_sends (seq, account_id, at, country, prefix, ip_hash, counted) VALUES ($1, $2, $3, $4, $5, $6, $7)',
    dropSend: `DELETE FROM fraud_sends WHERE seq = $1 RETURNING ${SEND_COLUMNS}`,
    /** The send as approved, in the same statement; a send approves once. */
    approve: `UPDATE fraud_sends SET approved_at = $2 WHERE seq = $1 AND approved_at IS NULL RETURNING ${SEND_COLUMNS}`,
    /** The country is proven: the latest approval is kept. */
    prove: `INSERT INTO fraud_countries (account_id, country, last_approved_at) VALUES ($1, $2, $3)
      ON CONFLICT (account_id, country) DO UPDATE SET last_approved_at = ${d.greatest('fraud_countries.last_approved_at', 'excluded.last_approved_at')}`,
    /**
     * Time of the account's ($1) send debits after $2 not refunded, newest
     * first, the one after skipping $3 (n - 1). Newest first along
     * credit_ledger_send_debits: it reads at most n rows (and their refund look-ups).
     */
    nthLatestDebit: `SELECT d.created_at FROM credit_ledger d
      WHERE d.account_id = $1 AND d.kind = 'debit' AND d.verification_id IS NOT NULL AND d.created_at > $2
        AND NOT EXISTS (SELECT 1 FROM credit_ledger r WHERE r.verification_id = d.verification_id AND r.kind = 'refund')
      ORDER BY d.created_at DESC LIMIT 1 OFFSET $3`,
    /** Blocks ending after $1, of account $2 (-1: all). */
    activeBlocks: `SELECT ${BLOCK_COLUMNS} FROM fraud_blocks WHERE until > $1 AND (CAST($2 AS INTEGER) < 0 OR account_id = CAST($2 AS INTEGER))
      ORDER BY account_id, until DESC, ${d.bytewise('kind')}, ${d.bytewise('scope')}`,
    /** Every send recorded after $1 (counted or not) and its approvals, by account ($2, -1: all) and country. */
    countryStats: `SELECT account_id, country, count(*) AS sends, count(approved_at) AS approved FROM fraud_sends
      WHERE at > $1 AND (CAST($2 AS INTEGER) < 0 OR account_id = CAST($2 AS INTEGER)) GROUP BY account_id, country
      ORDER BY account_id, sends DESC, ${d.bytewise('country')}`,
  } as const
}

export function toSettings(r: Row | undefined): AccountFraudSettings {
  const allowed = r?.allowed_countries as string | null | undefined
  return {
    allowedCountries: allowed == null ? null : allowed.split(','),
    dailyCreditLimit: numOrNull(r?.daily_credit_limit),
    // No account: the default, allowed.
    testRecipients: r === undefined ? true : bool(r.test_recipients),
  }
}

export function toBlock(r: Row): BlockRow {
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

/** A row of `dropSend` or `approve`. */
export interface SendCounts {
  accountId: number
  at: number
  country: string
  prefix: string
  counted: boolean
  approved: boolean
}

export function toSendCounts(r: Row): SendCounts {
  return {
    accountId: num(r.account_id),
    at: num(r.at),
    country: r.country as string,
    prefix: r.prefix as string,
    counted: bool(r.counted),
    approved: r.approved_at !== null && r.approved_at !== undefined,
  }
}

export function toCountryStats(r: Row): CountryStats {
  return { accountId: num(r.account_id), country: r.country as string, sends: num(r.sends), approved: num(r.approved) }
}

/** An exact count's row, or none. */
export function toCounts(r: Row | undefined | null): { sends: number; approved: number } {
  return { sends: num(r?.sends ?? 0), approved: num(r?.approved ?? 0) }
}
