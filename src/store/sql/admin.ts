/**
 * Accounts, keys and the ledger as the operator sees them
 * (otp/ports/admin.ts AdminRepo): the statements both engines run, and their
 * row mappers.
 */
import type { AccountRow, KeyRow, LedgerRow } from '../../otp/ports/index.ts'
import type { Dialect } from './dialect.ts'
import { num, numOrNull, type Row } from './values.ts'

const KEY_ROWS = `SELECT k.id, a.name AS account, k.name, k.prefix, k.status, k.created_at, k.last_used_at, k.expires_at
  FROM api_keys k JOIN accounts a ON a.id = k.account_id`

/** Accounts with their balance, which the engines keep differently (Dialect.accountBalance). */
export function accountSql(d: Dialect) {
  const columns = `id, name, code_length, ${d.accountBalance} AS balance, created_at`
  return {
    findAccount: `SELECT ${columns} FROM accounts WHERE name = $1`,
    listAccounts: `SELECT ${columns} FROM accounts ORDER BY id`,
    /** A new account has no credits. */
    insertAccount: 'INSERT INTO accounts (name, created_at) VALUES ($1, $2) RETURNING id, name, code_length, 0 AS balance, created_at',
  } as const
}

export const ADMIN_SQL = {
  setCodeLength: 'UPDATE accounts SET code_length = $2 WHERE id = $1',
  setLocale: 'UPDATE accounts SET locale = $2 WHERE id = $1',
  setOtpDomain: 'UPDATE accounts SET otp_domain = $2 WHERE id = $1',
  setCustomText: 'UPDATE accounts SET custom_text = $2 WHERE id = $1',
  insertKey: 'INSERT INTO api_keys (account_id, name, prefix, key_hash, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id',
  listKeys: `${KEY_ROWS} ORDER BY k.id`,
  listAccountKeys: `${KEY_ROWS} WHERE k.account_id = $1 ORDER BY k.id`,
  /** `$2` is the reference read as a key id, null when it is not one. */
  findKeys: `${KEY_ROWS} WHERE k.prefix = $1 OR k.id = $2 ORDER BY k.id`,
  setKeyStatus: 'UPDATE api_keys SET status = $2 WHERE id = $1',
  setKeyExpiry: 'UPDATE api_keys SET expires_at = $2 WHERE id = $1',
  /** Newest first, from before entry `$3` (a page's last id; the largest integer for the first page). */
  ledger:
    'SELECT id, kind, amount, verification_id, note, created_at FROM credit_ledger WHERE account_id = $1 AND id < CAST($3 AS BIGINT) ORDER BY id DESC LIMIT $2',
} as const

export function toAccount(r: Row): AccountRow {
  return { id: num(r.id), name: r.name as string, codeLength: numOrNull(r.code_length), balance: num(r.balance), createdAt: num(r.created_at) }
}

export function toKeyRow(r: Row): KeyRow {
  return {
    id: num(r.id),
    account: r.account as string,
    name: r.name as string,
    prefix: r.prefix as string,
    status: r.status as KeyRow['status'],
    createdAt: num(r.created_at),
    lastUsedAt: numOrNull(r.last_used_at),
    expiresAt: numOrNull(r.expires_at),
  }
}

export function toLedgerRow(r: Row): LedgerRow {
  return {
    id: num(r.id),
    kind: r.kind as LedgerRow['kind'],
    amount: num(r.amount),
    verificationId: r.verification_id as string | null,
    note: r.note as string | null,
    createdAt: num(r.created_at),
  }
}

/** A numeric reference is also tried as a key id: up to `maxDigits` digits (what the engine's id column holds). */
export function keyIdOf(ref: string, maxDigits: number): number | null {
  return ref.length <= maxDigits && /^[0-9]+$/.test(ref) ? Number(ref) : null
}

/** A numeric id wins over a prefix that happens to be all digits. */
export function exactKey(rows: KeyRow[], ref: string): KeyRow[] {
  const exact = rows.filter((r) => String(r.id) === ref)
  return exact.length === 1 ? exact : rows
}
