/**
 * An account's balance on PostgreSQL: the sum of its BALANCE_STRIPES rows in
 * `account_balances`, so that many sends of one account can hold a row at once
 * (docs/multi-node.md#an-accounts-balance). A debit takes a free row that covers
 * it (`FOR UPDATE SKIP LOCKED`), else locks every row in stripe order and decides
 * on the committed total. A transaction waiting for a stripe holds no other (the
 * all-rows path and grants lock in stripe order), so stripes never deadlock.
 * Grants and refunds spread from a random stripe; an unguarded ledger debit
 * comes from stripe 0, which may go negative: every rule reads the total.
 */
import { LEDGER_COLUMNS } from '../sql/credits.ts'
import { POSTGRES } from '../sql/dialect.ts'

/** Rows per account; a send holds one of them from its debit to its COMMIT. */
export const BALANCE_STRIPES = 16

/** The share of `amount` (an SQL expression, >= 0) for stripe `s` when it is spread from stripe `from`. */
const share = (amount: string, s: string, from: string): string =>
  `${amount} / ${BALANCE_STRIPES} + CASE WHEN (${s} - ${from} + ${BALANCE_STRIPES}) % ${BALANCE_STRIPES} < ${amount} % ${BALANCE_STRIPES} THEN 1 ELSE 0 END`

const LEDGER = `INSERT INTO credit_ledger (${LEDGER_COLUMNS})`

export const BALANCE_SQL = {
  /** `$1` the account, `$2` the balance to start with (>= 0): all its rows, the balance spread over them. */
  create: `INSERT INTO account_balances (account_id, stripe, balance)
    SELECT $1::int, s, ${share('$2::bigint', 's', '0')} FROM generate_series(0, ${BALANCE_STRIPES - 1}) AS s ORDER BY s`,
  /** `$1` the account, `$2` the amount (> 0), `$3` the stripe to start from: spread, in stripe order. */
  add: `INSERT INTO account_balances (account_id, stripe, balance)
    SELECT $1::int, s, ${share('$2::bigint', 's', '$3::int')} FROM generate_series(0, ${BALANCE_STRIPES - 1}) AS s
    WHERE ${share('$2::bigint', 's', '$3::int')} > 0 ORDER BY s
    ON CONFLICT (account_id, stripe) DO UPDATE SET balance = account_balances.balance + excluded.balance`,
  /** `$1` the account, `$2` the amount: taken from stripe 0, unguarded (a debit posted as a ledger entry). */
  take: `INSERT INTO account_balances (account_id, stripe, balance) VALUES ($1::int, 0, -$2::bigint)
    ON CONFLICT (account_id, stripe) DO UPDATE SET balance = account_balances.balance + excluded.balance`,
  /**
   * The debit's first try: one free row that covers the amount, from a random
   * stripe on, and its ledger row. `$1` the amount, `$2` the account, `$3` the
   * verification, `$4` a note, `$5` when, `$6` the stripe to start from.
   * Moves nothing when no free row covers it.
   */
  debitOneRow: `WITH picked AS MATERIALIZED (
      SELECT stripe FROM account_balances WHERE account_id = $2::int AND balance >= $1::bigint
      ORDER BY (stripe - $6::int + ${BALANCE_STRIPES}) % ${BALANCE_STRIPES} LIMIT 1 FOR UPDATE SKIP LOCKED
    ), moved AS (
      UPDATE account_balances b SET balance = b.balance - $1::bigint FROM picked
      WHERE b.account_id = $2::int AND b.stripe = picked.stripe AND b.balance >= $1::bigint RETURNING b.account_id
    )
    ${LEDGER} SELECT account_id, 'debit', $1::bigint, $3::text, $4::text, $5::bigint FROM moved`,
  /**
   * The debit decided on the total: every row of the account locked in stripe
   * order (waiting for their holders), then the amount taken from the rows in
   * that order, with its ledger row, or nothing when the total does not cover
   * it. Parameters as `debitOneRow`'s, without `$6`.
   */
  debitAllRows: `WITH held AS MATERIALIZED (
      SELECT stripe, balance FROM account_balances WHERE account_id = $2::int ORDER BY stripe FOR UPDATE
    ), covered AS (
      SELECT 1 FROM held HAVING coalesce(sum(balance), 0) >= $1::bigint
    ), plan AS (
      SELECT stripe, least(balance, $1::bigint - (sum(balance) OVER (ORDER BY stripe) - balance)) AS amount
      FROM held WHERE balance > 0
    ), moved AS (
      UPDATE account_balances b SET balance = b.balance - plan.amount FROM plan
      WHERE EXISTS (SELECT 1 FROM covered) AND b.account_id = $2::int AND b.stripe = plan.stripe AND plan.amount > 0
      RETURNING b.account_id
    )
    ${LEDGER} SELECT $2::int, 'debit', $1::bigint, $3::text, $4::text, $5::bigint WHERE EXISTS (SELECT 1 FROM moved)`,
  /** `$1` the account. */
  balance: `SELECT ${POSTGRES.accountBalance} AS balance FROM accounts WHERE id = $1`,
} as const

/** A stripe to start from, so that concurrent debits and small grants spread over the rows. */
export function randomStripe(): number {
  return Math.floor(Math.random() * BALANCE_STRIPES)
}
