/**
 * Balances and the credit ledger.
 */

import type { AccountFraudSettings } from './fraud.ts'

export interface LedgerEntry {
  accountId: number
  kind: 'grant' | 'debit' | 'refund'
  amount: number
  verificationId?: string
  note?: string
  at: number
}

export interface CreditStore {
  balance(accountId: number): Promise<number>
  /** Appends a ledger row and moves the balance in step. */
  post(entry: LedgerEntry): Promise<void>
  /** Posts a debit if the balance covers it (check and move in one statement); false when it does not. */
  debit(entry: Omit<LedgerEntry, 'kind'>): Promise<boolean>
  codeLength(accountId: number): Promise<number | null>
  /** What a send reads of its account: the code length, its name, language and autofill domain (docs/messages.md), and its fraud guard settings. */
  sendProfile(accountId: number): Promise<SendProfile>
}

export interface SendProfile {
  codeLength: number | null
  name: string
  /** `otpd accounts set --locale`; null: none. */
  locale: string | null
  /** `otpd accounts set --otp-domain`; null: the config's `messages.otp_domain`. */
  otpDomain: string | null
  /** `otpd accounts set --custom-text`: whether a send may carry its own `message` and `subject`. */
  customText: boolean
  /** What FraudStore.accountSettings answers, read in the same statement. */
  fraud: AccountFraudSettings
}
