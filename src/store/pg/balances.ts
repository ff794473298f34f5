/**
 * An account's balance on PostgreSQL: the sum of its rows in
 * `account_balances` (docs/multi-node.md#an-accounts-balance).
 *
 * With one row per account, every send of the account held that row's lock
 * from its debit to its COMMIT, so the account's sends committed one after
 * the other, on every node. Split over BALANCE_STRIPES rows, a send debits a
 * row no other transaction holds, and up to that many sends of one account
 * are in flight at once. The rules stay exact:
 *
 * - Never below zero. A debit first takes one row that covers the amount and
 *   that no other transaction holds (`FOR UPDATE SKIP LOCKED`). Only when no
 *   such row is free does it lock every row of the account, in stripe order,
 *   waiting for their holders, and then it decides on the total: it takes the
 *   amount from as many rows as needed, or refuses. A refusal is therefore
 *   decided on the committed total, as the one guarded UPDATE decided before.
 * - No deadlock between stripes: a transaction that waits for a stripe holds
 *   no other stripe, except the all-rows path and a grant, which lock in
 *   stripe order.
 * - Every account has all its rows from its creation (the migration that
 *   introduced them, `insertAccount`, `db copy`). Grants and refunds update
 *   rows that exist, so the all-rows path, which waits for every row it finds,
 *   cannot miss credits that a transaction committed while it waited.
 *
 * Grants and refunds spread the amount over the rows from a random stripe on,
 * so that sends find covered rows on every stripe. A debit posted as a ledger
 * entry (`post` with kind `debit`, no guard) is taken from stripe 0, which may
 * then be negative; the total is what every rule reads.
 */
import { POSTGRES } from '../sql/dialect.ts'

/** Rows per account; a send holds one of them from its debit to its COMMIT. `otpd_debit` (migration 0009) counts them too. */
export const BALANCE_STRIPES = 16

/** The share of `amount` (an SQL expression, >= 0) for stripe `s` when it is spread from stripe `from`. */
const share = (amount: string, s: string, from: string): string =>
  `${amount} / ${BALANCE_STRIPES} + CASE WHEN (${s} - ${from} + ${BALANCE_STRIPES}) % ${BALANCE_STRIPES} < ${amount} % ${BALANCE_STRIPES} THEN 1 ELSE 0 END`

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
   * A debit and its ledger row (`otpd_debit`, migration 0009: one free row
   * that covers the amount, else every row in stripe order and the total).
   * `$1` the amount, `$2` the account, `$3` the verification, `$4` a note,
   * `$5` when, `$6` the stripe to start from. `debit` answers whether it was
   * taken; `debitOrFail` answers nothing and, when the total does not cover
   * it, fails with SQLSTATE OT402 (DEBIT_REFUSED), which rolls the
   * transaction back.
   */
  debit: 'SELECT otpd_debit($1::bigint, $2::int, $3::text, $4::text, $5::bigint, $6::int, false) AS taken',
  debitOrFail: 'SELECT otpd_debit($1::bigint, $2::int, $3::text, $4::text, $5::bigint, $6::int, true)',
  /** `$1` the account. */
  balance: `SELECT ${POSTGRES.accountBalance} AS balance FROM accounts WHERE id = $1`,
} as const

/** A stripe to start from, so that concurrent debits and small grants spread over the rows. */
export function randomStripe(): number {
  return Math.floor(Math.random() * BALANCE_STRIPES)
}
