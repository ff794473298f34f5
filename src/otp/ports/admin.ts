/**
 * Accounts, keys and the ledger as the operator sees them.
 */
import type { KeyStatus } from '../types.ts'

export interface AccountRow {
  id: number
  name: string
  codeLength: number | null
  balance: number
  createdAt: number
}

export interface KeyRow {
  id: number
  account: string
  name: string
  prefix: string
  status: KeyStatus
  createdAt: number
  lastUsedAt: number | null
  /** Set on a rotated key: when it stops working (docs/operating.md#rotating-a-key); null: never. */
  expiresAt: number | null
}

export interface LedgerRow {
  id: number
  kind: 'grant' | 'debit' | 'refund'
  amount: number
  verificationId: string | null
  note: string | null
  createdAt: number
}

/** Accounts, keys and the ledger as the operator sees them. */
export interface AdminRepo {
  findAccount(name: string): Promise<AccountRow | undefined>
  listAccounts(): Promise<AccountRow[]>
  insertAccount(name: string, at: number): Promise<AccountRow>
  setCodeLength(accountId: number, length: number): Promise<void>
  /** `otpd accounts set --locale / --otp-domain` (docs/messages.md); null clears one, undefined leaves it. */
  setMessaging(accountId: number, change: MessagingChange): Promise<void>
  insertKey(k: { accountId: number; name: string; prefix: string; keyHash: string; at: number }): Promise<number>
  listKeys(accountId?: number): Promise<KeyRow[]>
  findKeys(idOrPrefix: string): Promise<KeyRow[]>
  setKeyStatus(id: number, status: KeyStatus): Promise<void>
  /** When a rotated key stops working. */
  setKeyExpiry(id: number, at: number): Promise<void>
  /** Newest first; `beforeId`: only entries older than that one (the next page). */
  ledger(accountId: number, limit: number, beforeId?: number): Promise<LedgerRow[]>
}

/** An account's texts settings (docs/messages.md, docs/api.md#send-request-body): each undefined one is kept. */
export interface MessagingChange {
  locale?: string | null
  otpDomain?: string | null
  customText?: boolean
}
