/**
 * Accounts, API keys and the credit ledger (otp/ports/ admin, credits and
 * keys): the shared statements of store/sql/. The balance never goes below
 * zero on any node: a debit is one guarded UPDATE (`balance >= amount`),
 * which PostgreSQL re-checks on the newest row version after waiting for
 * another transaction's lock on it, and its ledger row is written by the same
 * statement. Code lengths are read from the database on every send, never
 * kept: another node's `otpd accounts set-code-length` applies at once.
 */
import type { AccountRow, AdminRepo, CreditStore, KeyRow, KeyStore, LedgerEntry, LedgerRow, SendProfile } from '../../otp/ports/index.ts'
import type { KeyStatus, StoredKey } from '../../otp/types.ts'
import { ADMIN_SQL, exactKey, keyIdOf, toAccount, toKeyRow, toLedgerRow } from '../sql/admin.ts'
import { CREDIT_SQL, LEDGER_COLUMNS, toSendProfile } from '../sql/credits.ts'
import { KEY_SQL, toStoredKey } from '../sql/keys.ts'
import { num, numOrNull } from '../sql/values.ts'
import type { Tx } from './client.ts'

/**
 * PostgreSQL's own form of the shared guarded debit: the UPDATE's `RETURNING`
 * feeds the ledger row's INSERT in one statement, so a send's debit costs one
 * round trip (SQLite runs the two statements).
 */
const DEBIT = `WITH moved AS (${CREDIT_SQL.debit} RETURNING id)
  INSERT INTO credit_ledger (${LEDGER_COLUMNS}) SELECT id, 'debit', $1, $3, $4, $5 FROM moved`

export class PgKeyStore implements KeyStore {
  constructor(private readonly tx: Tx) {}
  async findByPrefix(prefix: string): Promise<StoredKey[]> {
    return (await this.tx.q(KEY_SQL.findByPrefix, [prefix])).map(toStoredKey)
  }
  /** At COMMIT, after the key's hit (store/pg/event-logs.ts): the key's row is written only while its lock is held. */
  async touch(keyId: number, at: number): Promise<void> {
    await this.tx.atCommit(async () => this.tx.exec(KEY_SQL.touch, [keyId, at]))
  }
}

export class PgCreditStore implements CreditStore {
  constructor(private readonly tx: Tx) {}
  async balance(accountId: number): Promise<number> {
    const rows = await this.tx.q(CREDIT_SQL.balance, [accountId])
    return rows[0] === undefined ? 0 : num(rows[0].balance)
  }
  async codeLength(accountId: number): Promise<number | null> {
    const rows = await this.tx.q(CREDIT_SQL.codeLength, [accountId])
    return numOrNull(rows[0]?.code_length)
  }
  async sendProfile(accountId: number): Promise<SendProfile> {
    return toSendProfile((await this.tx.q(CREDIT_SQL.sendProfile, [accountId]))[0])
  }
  async debit(e: Omit<LedgerEntry, 'kind'>): Promise<boolean> {
    return (await this.tx.run(DEBIT, [e.amount, e.accountId, e.verificationId ?? null, e.note ?? null, e.at])) === 1
  }
  async post(e: LedgerEntry): Promise<void> {
    // Both pipelined (nothing reads their results): the account's row lock first, then its ledger row.
    this.tx.exec(CREDIT_SQL.move, [e.accountId, e.kind === 'debit' ? -e.amount : e.amount])
    this.tx.exec(CREDIT_SQL.ledger, [e.accountId, e.kind, e.amount, e.verificationId ?? null, e.note ?? null, e.at])
  }
}

export class PgAdminStore implements AdminRepo {
  constructor(private readonly tx: Tx) {}

  async findAccount(name: string): Promise<AccountRow | undefined> {
    const rows = await this.tx.q(ADMIN_SQL.findAccount, [name])
    return rows[0] === undefined ? undefined : toAccount(rows[0])
  }
  async listAccounts(): Promise<AccountRow[]> {
    return (await this.tx.q(ADMIN_SQL.listAccounts)).map(toAccount)
  }
  async insertAccount(name: string, at: number): Promise<AccountRow> {
    return toAccount((await this.tx.q(ADMIN_SQL.insertAccount, [name, at]))[0]!)
  }
  async setCodeLength(accountId: number, length: number): Promise<void> {
    await this.tx.run(ADMIN_SQL.setCodeLength, [accountId, length])
  }
  async setMessaging(accountId: number, change: { locale?: string | null; otpDomain?: string | null }): Promise<void> {
    if (change.locale !== undefined) await this.tx.run(ADMIN_SQL.setLocale, [accountId, change.locale])
    if (change.otpDomain !== undefined) await this.tx.run(ADMIN_SQL.setOtpDomain, [accountId, change.otpDomain])
  }
  async insertKey(k: { accountId: number; name: string; prefix: string; keyHash: string; at: number }): Promise<number> {
    return num((await this.tx.q(ADMIN_SQL.insertKey, [k.accountId, k.name, k.prefix, k.keyHash, k.at]))[0]!.id)
  }
  async listKeys(accountId?: number): Promise<KeyRow[]> {
    const rows = accountId === undefined ? await this.tx.q(ADMIN_SQL.listKeys) : await this.tx.q(ADMIN_SQL.listAccountKeys, [accountId])
    return rows.map(toKeyRow)
  }
  async findKeys(idOrPrefix: string): Promise<KeyRow[]> {
    // Key ids are PostgreSQL integers: a reference of more than 9 digits is no id (and would overflow the parameter).
    const rows = await this.tx.q(ADMIN_SQL.findKeys, [idOrPrefix, keyIdOf(idOrPrefix, 9)])
    return exactKey(rows.map(toKeyRow), idOrPrefix)
  }
  async setKeyStatus(id: number, status: KeyStatus): Promise<void> {
    await this.tx.run(ADMIN_SQL.setKeyStatus, [id, status])
  }
  async ledger(accountId: number, limit: number): Promise<LedgerRow[]> {
    return (await this.tx.q(ADMIN_SQL.ledger, [accountId, limit])).map(toLedgerRow)
  }
}
