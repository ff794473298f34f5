/**
 * Accounts, API keys and the credit ledger (see otp/admin.ts, otp/ports.ts
 * and store/sqlite/admin-store.ts). The balance never goes below zero on any
 * node: a debit is one guarded UPDATE (`balance >= amount`), which
 * PostgreSQL re-checks on the newest row version after waiting for another
 * transaction's lock on it, and its ledger row is written by the same
 * statement. Code lengths are read from the database on every send, never
 * kept: another node's `otpd accounts set-code-length` applies at once.
 */
import type { AccountRow, AdminRepo, CreditStore, KeyRow, KeyStore, LedgerEntry, LedgerRow } from '../../otp/ports/index.ts'
import type { KeyStatus, StoredKey } from '../../otp/types.ts'
import { num, numOrNull, type Tx } from './client.ts'

type Row = Record<string, unknown>

export class PgKeyStore implements KeyStore {
  constructor(private readonly tx: Tx) {}
  async findByPrefix(prefix: string): Promise<StoredKey[]> {
    const rows = await this.tx.q<Row>('SELECT id, account_id, prefix, status, key_hash FROM api_keys WHERE prefix = $1', [prefix])
    return rows.map((r) => ({
      id: num(r.id),
      accountId: num(r.account_id),
      prefix: r.prefix as string,
      status: r.status as KeyStatus,
      keyHash: r.key_hash as string,
    }))
  }
  async touch(keyId: number, at: number): Promise<void> {
    this.tx.exec('UPDATE api_keys SET last_used_at = $2 WHERE id = $1', [keyId, at])
  }
}

export class PgCreditStore implements CreditStore {
  constructor(private readonly tx: Tx) {}
  async balance(accountId: number): Promise<number> {
    const rows = await this.tx.q<Row>('SELECT balance FROM accounts WHERE id = $1', [accountId])
    return rows[0] === undefined ? 0 : num(rows[0].balance)
  }
  async codeLength(accountId: number): Promise<number | null> {
    const rows = await this.tx.q<Row>('SELECT code_length FROM accounts WHERE id = $1', [accountId])
    return numOrNull(rows[0]?.code_length)
  }
  async debit(e: Omit<LedgerEntry, 'kind'>): Promise<boolean> {
    const n = await this.tx.run(
      `WITH moved AS (UPDATE accounts SET balance = balance - $2 WHERE id = $1 AND balance >= $2 RETURNING id)
       INSERT INTO credit_ledger (account_id, kind, amount, verification_id, note, created_at) SELECT id, 'debit', $2, $3, $4, $5 FROM moved`,
      [e.accountId, e.amount, e.verificationId ?? null, e.note ?? null, e.at],
    )
    return n === 1
  }
  async post(e: LedgerEntry): Promise<void> {
    this.tx.exec(
      `WITH moved AS (UPDATE accounts SET balance = balance + $6 WHERE id = $1 RETURNING id)
       INSERT INTO credit_ledger (account_id, kind, amount, verification_id, note, created_at) VALUES ($1, $2, $3, $4, $5, $7)`,
      [e.accountId, e.kind, e.amount, e.verificationId ?? null, e.note ?? null, e.kind === 'debit' ? -e.amount : e.amount, e.at],
    )
  }
}

function toAccount(r: Row): AccountRow {
  return { id: num(r.id), name: r.name as string, codeLength: numOrNull(r.code_length), balance: num(r.balance), createdAt: num(r.created_at) }
}

function toKey(r: Row): KeyRow {
  return {
    id: num(r.id),
    account: r.account as string,
    name: r.name as string,
    prefix: r.prefix as string,
    status: r.status as KeyStatus,
    createdAt: num(r.created_at),
    lastUsedAt: numOrNull(r.last_used_at),
  }
}

const KEY_ROWS = `SELECT k.id, a.name AS account, k.name, k.prefix, k.status, k.created_at, k.last_used_at
  FROM api_keys k JOIN accounts a ON a.id = k.account_id`

export class PgAdminStore implements AdminRepo {
  constructor(private readonly tx: Tx) {}

  async findAccount(name: string): Promise<AccountRow | undefined> {
    const rows = await this.tx.q<Row>('SELECT id, name, code_length, balance, created_at FROM accounts WHERE name = $1', [name])
    return rows[0] === undefined ? undefined : toAccount(rows[0])
  }
  async listAccounts(): Promise<AccountRow[]> {
    return (await this.tx.q<Row>('SELECT id, name, code_length, balance, created_at FROM accounts ORDER BY id')).map(toAccount)
  }
  async insertAccount(name: string, at: number): Promise<AccountRow> {
    const rows = await this.tx.q<Row>('INSERT INTO accounts (name, created_at) VALUES ($1, $2) RETURNING id, name, code_length, balance, created_at', [
      name,
      at,
    ])
    return toAccount(rows[0]!)
  }
  async setCodeLength(accountId: number, length: number): Promise<void> {
    await this.tx.run('UPDATE accounts SET code_length = $2 WHERE id = $1', [accountId, length])
  }
  async insertKey(k: { accountId: number; name: string; prefix: string; keyHash: string; at: number }): Promise<number> {
    const rows = await this.tx.q<Row>('INSERT INTO api_keys (account_id, name, prefix, key_hash, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id', [
      k.accountId,
      k.name,
      k.prefix,
      k.keyHash,
      k.at,
    ])
    return num(rows[0]!.id)
  }
  async listKeys(accountId?: number): Promise<KeyRow[]> {
    const rows =
      accountId === undefined
        ? await this.tx.q<Row>(`${KEY_ROWS} ORDER BY k.id`)
        : await this.tx.q<Row>(`${KEY_ROWS} WHERE k.account_id = $1 ORDER BY k.id`, [accountId])
    return rows.map(toKey)
  }
  async findKeys(idOrPrefix: string): Promise<KeyRow[]> {
    const asId = /^[0-9]{1,9}$/.test(idOrPrefix) ? Number(idOrPrefix) : null
    const rows = (await this.tx.q<Row>(`${KEY_ROWS} WHERE k.prefix = $1 OR k.id = $2 ORDER BY k.id`, [idOrPrefix, asId])).map(toKey)
    // A numeric id wins over a prefix that happens to be all digits.
    const exact = rows.filter((r) => String(r.id) === idOrPrefix)
    return exact.length === 1 ? exact : rows
  }
  async setKeyStatus(id: number, status: KeyStatus): Promise<void> {
    await this.tx.run('UPDATE api_keys SET status = $2 WHERE id = $1', [id, status])
  }
  async ledger(accountId: number, limit: number): Promise<LedgerRow[]> {
    const rows = await this.tx.q<Row>(
      'SELECT id, kind, amount, verification_id, note, created_at FROM credit_ledger WHERE account_id = $1 ORDER BY id DESC LIMIT $2',
      [accountId, limit],
    )
    return rows.map((r) => ({
      id: num(r.id),
      kind: r.kind as LedgerRow['kind'],
      amount: num(r.amount),
      verificationId: r.verification_id as string | null,
      note: r.note as string | null,
      createdAt: num(r.created_at),
    }))
  }
}
