/** Accounts and keys as operators manage them (otp/ports/admin.ts): the shared statements of store/sql/admin.ts. */
import type { AccountRow, AdminRepo, KeyRow, LedgerRow, MessagingChange } from '../../otp/ports/index.ts'
import type { KeyStatus } from '../../otp/types.ts'
import { ADMIN_SQL, accountSql, exactKey, keyIdOf, toAccount, toKeyRow, toLedgerRow } from '../sql/admin.ts'
import { POSTGRES } from '../sql/dialect.ts'
import { num } from '../sql/values.ts'
import { BALANCE_SQL } from './balances.ts'
import type { Tx } from './client.ts'

const ACCOUNT_SQL = accountSql(POSTGRES)

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
  async setMessaging(accountId: number, change: MessagingChange): Promise<void> {
    if (change.locale !== undefined) await this.tx.run(ADMIN_SQL.setLocale, [accountId, change.locale])
    if (change.otpDomain !== undefined) await this.tx.run(ADMIN_SQL.setOtpDomain, [accountId, change.otpDomain])
    if (change.customText !== undefined) await this.tx.run(ADMIN_SQL.setCustomText, [accountId, change.customText])
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
  async setKeyExpiry(id: number, at: number): Promise<void> {
    await this.tx.run(ADMIN_SQL.setKeyExpiry, [id, at])
  }
  async ledger(accountId: number, limit: number, beforeId?: number): Promise<LedgerRow[]> {
    return (await this.tx.q(ADMIN_SQL.ledger, [accountId, limit, beforeId ?? Number.MAX_SAFE_INTEGER])).map(toLedgerRow)
  }
}
