/**
 * Balances and the credit ledger.
 */

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
  /**
   * A send's debit: true when the balance covers it, and then the debit is
   * posted by the transaction's COMMIT. On PostgreSQL the balance is read now
   * without the account's lock and the guarded move runs right before COMMIT,
   * so an account's sends hold its row only for their COMMIT, not for the
   * rest of their transaction; if the last credit went meanwhile, the write
   * runs again and answers from the balance then. Nothing in the transaction
   * may read the balance after it.
   */
  debitAtCommit(entry: Omit<LedgerEntry, 'kind'>): Promise<boolean>
  codeLength(accountId: number): Promise<number | null>
  /** What a send reads of its account: the code length, and its name, language and autofill domain (docs/messages.md). */
  sendProfile(accountId: number): Promise<SendProfile>
}

export interface SendProfile {
  codeLength: number | null
  name: string
  /** `otpd accounts set --locale`; null: none. */
  locale: string | null
  /** `otpd accounts set --otp-domain`; null: the config's `messages.otp_domain`. */
  otpDomain: string | null
}
