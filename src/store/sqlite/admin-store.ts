/** Accounts and keys as operators manage them (otp/ports/admin.ts): the shared statements of store/sql/admin.ts. */
import type { AccountRow, AdminRepo, KeyRow, LedgerRow, MessagingChange } from '../../otp/ports/index.ts'
import type { KeyStatus } from '../../otp/types.ts'
import { ADMIN_SQL, accountSql, exactKey, keyIdOf, toAccount, toKeyRow, toLedgerRow } from '../sql/admin.ts'
import { SQLITE } from '../sql/dialect.ts'
import { num } from '../sql/values.ts'
import type { Db } from './db.ts'
import { type Prepared, prepareShared } from './shared-sql.ts'

export class SqliteAdminStore implements AdminRepo {
  private readonly q: Record<keyof typeof ADMIN_SQL | keyof ReturnType<typeof accountSql>, Prepared>

  /** `codeLengthChanged`: the credit store's copy of code lengths is dropped when one is written. */
  constructor(
    db: Db,
    private readonly codeLengthChanged: () => void = () => {},
  ) {
    this.q = prepareShared(db.$client, { ...ADMIN_SQL, ...accountSql(SQLITE) })
  }

  async findAccount(name: string): Promise<AccountRow | undefined> {
    const row = this.q.findAccount.get(name)
    return row === null ? undefined : toAccount(row)
  }
  async listAccounts(): Promise<AccountRow[]> {
    return this.q.listAccounts.all().map(toAccount)
  }
  async insertAccount(name: string, at: number): Promise<AccountRow> {
    return toAccount(this.q.insertAccount.get(name, at)!)
  }
  async setCodeLength(accountId: number, length: number): Promise<void> {
    this.q.setCodeLength.run(accountId, length)
    this.codeLengthChanged()
  }
  async setMessaging(accountId: number, change: MessagingChange): Promise<void> {
    if (change.locale !== undefined) this.q.setLocale.run(accountId, change.locale)
    if (change.otpDomain !== undefined) this.q.setOtpDomain.run(accountId, change.otpDomain)
    if (change.customText !== undefined) this.q.setCustomText.run(accountId, change.customText ? 1 : 0)
    this.codeLengthChanged()
  }
  async insertKey(k: { accountId: number; name: string; prefix: string; keyHash: string; at: number }): Promise<number> {
    return num(this.q.insertKey.get(k.accountId, k.name, k.prefix, k.keyHash, k.at)!.id)
  }
  async listKeys(accountId?: number): Promise<KeyRow[]> {
    const rows = accountId === undefined ? this.q.listKeys.all() : this.q.listAccountKeys.all(accountId)
    return rows.map(toKeyRow)
  }
  async findKeys(idOrPrefix: string): Promise<KeyRow[]> {
    // Ids are SQLite integers: any reference of up to 15 digits may be one.
    const rows = this.q.findKeys.all(idOrPrefix, keyIdOf(idOrPrefix, 15))
    return exactKey(rows.map(toKeyRow), idOrPrefix)
  }
  async setKeyStatus(id: number, status: KeyStatus): Promise<void> {
    this.q.setKeyStatus.run(id, status)
  }
  async setKeyExpiry(id: number, at: number): Promise<void> {
    this.q.setKeyExpiry.run(id, at)
  }
  async ledger(accountId: number, limit: number, beforeId?: number): Promise<LedgerRow[]> {
    return this.q.ledger.all(accountId, limit, beforeId ?? Number.MAX_SAFE_INTEGER).map(toLedgerRow)
  }
}
