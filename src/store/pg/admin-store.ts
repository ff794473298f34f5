/**
 * Accounts, API keys and the credit ledger (otp/ports/ admin, credits and
 * keys): the shared statements of store/sql/, and the balance spread over
 * rows (store/pg/balances.ts), which never goes below zero on any node: each
 * debit's statement moves the balance and writes its ledger row. Code
 * lengths are read from the database on every send, never kept: another
 * node's `otpd accounts set-code-length` applies at once.
 */
import type { AccountRow, AdminRepo, CreditStore, KeyRow, KeyStore, LedgerEntry, LedgerRow, SendProfile } from '../../otp/ports/index.ts'
import type { KeyStatus, StoredKey } from '../../otp/types.ts'
import { ADMIN_SQL, accountSql, exactKey, keyIdOf, toAccount, toKeyRow, toLedgerRow } from '../sql/admin.ts'
import { CREDIT_SQL, toSendProfile } from '../sql/credits.ts'
import { POSTGRES } from '../sql/dialect.ts'
import { KEY_SQL, toStoredKey } from '../sql/keys.ts'
import { num, numOrNull } from '../sql/values.ts'
import { BALANCE_SQL, randomStripe } from './balances.ts'
import type { Tx } from './client.ts'

const ACCOUNT_SQL = accountSql(POSTGRES)

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
    const rows = await this.tx.q(BALANCE_SQL.balance, [accountId])
    return rows[0] === undefined ? 0 : num(rows[0].balance)
  }
  async codeLength(accountId: number): Promise<number | null> {
    const rows = await this.tx.q(CREDIT_SQL.codeLength, [accountId])
    return numOrNull(rows[0]?.code_length)
  }
  async sendProfile(accountId: number): Promise<SendProfile> {
    return toSendProfile((await this.tx.q(CREDIT_SQL.sendProfile, [accountId]))[0])
  }
  /** One free row that covers it, or else every row, waited for, and the total (store/pg/balances.ts). */
  async debit(e: Omit<LedgerEntry, 'kind'>): Promise<boolean> {
    const params = [e.amount, e.accountId, e.verificationId ?? null, e.note ?? null, e.at]
    if ((await this.tx.run(BALANCE_SQL.debitOneRow, [...params, randomStripe()])) === 1) return true
    return (await this.tx.run(BALANCE_SQL.debitAllRows, params)) === 1
  }
  async post(e: LedgerEntry): Promise<void> {
    // Both pipelined (nothing reads their results): the balance's rows first, then the ledger row.
    if (e.kind === 'debit') this.tx.exec(BALANCE_SQL.take, [e.accountId, e.amount])
    else this.tx.exec(BALANCE_SQL.add, [e.accountId, e.amount, randomStripe()])
    this.tx.exec(CREDIT_SQL.ledger, [e.accountId, e.kind, e.amount, e.verificationId ?? null, e.note ?? null, e.at])
  }
}

export class PgAdminStore implements AdminRepo {
  constructor(private readonly tx: Tx) {}

  async findAccount(name: string): Promise<AccountRow | undefined> {
    const rows = await this.tx.q(ACCOUNT_SQL.findAccount, [name])
    return rows[0] === undefined ? undefined : toAccount(rows[0])
  }
  async listAccounts(): Promise<AccountRow[]> {
    return (await this.tx.q(ACCOUNT_SQL.listAccounts)).map(toAccount)
  }
  async insertAccount(name: string, at: number): Promise<AccountRow> {
    const account = toAccount((await this.tx.q(ACCOUNT_SQL.insertAccount, [name, at]))[0]!)
    // Every row of its balance from the start (store/pg/balances.ts).
    this.tx.exec(BALANCE_SQL.create, [account.id, 0])
    return account
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
