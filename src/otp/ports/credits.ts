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
  codeLength(accountId: number): Promise<number | null>
}
