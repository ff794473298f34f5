/**
 * Balances and the credit ledger (otp/ports/credits.ts CreditStore). The
 * ledger row and the account's reads are both engines'. The balance is
 * SQLite's: one column of the account's row, never below zero, as a debit is
 * one guarded UPDATE (`balance >= amount`), checked and moved in one
 * statement, its ledger row written in the same transaction. PostgreSQL
 * spreads a balance over rows that sends debit in parallel
 * (store/pg/balances.ts).
 */

import type { SendProfile } from '../../otp/ports/index.ts'
import { toSettings } from './fraud.ts'
import { numOrNull, type Row } from './values.ts'

export const LEDGER_COLUMNS = 'account_id, kind, amount, verification_id, note, created_at'

export const CREDIT_SQL = {
  balance: 'SELECT balance FROM accounts WHERE id = $1',
  codeLength: 'SELECT code_length FROM accounts WHERE id = $1',
  /** What a send reads of its account (otp/ports/credits.ts SendProfile): one statement. */
  sendProfile: 'SELECT code_length, name, locale, otp_domain, custom_text, allowed_countries, daily_credit_limit, test_recipients FROM accounts WHERE id = $1',
  /** `$1` the amount, `$2` the account: moves nothing when the balance does not cover it. */
  debit: 'UPDATE accounts SET balance = balance - $1 WHERE id = $2 AND balance >= $1',
  /** `$1` the account, `$2` the signed amount. */
  move: 'UPDATE accounts SET balance = balance + $2 WHERE id = $1',
  /** `$1` the account, `$2` the kind, `$3` the amount (positive: the kind gives the sign), `$4` the verification, `$5` a note, `$6` when. */
  ledger: `INSERT INTO credit_ledger (${LEDGER_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)`,
} as const

export function toSendProfile(r: Row | undefined | null): SendProfile {
  return {
    codeLength: numOrNull(r?.code_length),
    name: (r?.name as string | undefined) ?? '',
    locale: (r?.locale as string | null | undefined) ?? null,
    otpDomain: (r?.otp_domain as string | null | undefined) ?? null,
    customText: r?.custom_text === undefined || r.custom_text === null ? true : Boolean(r.custom_text),
    fraud: toSettings(r ?? undefined),
  }
}
