/**
 * Accounts, API keys and the credit ledger (otp/ports/ admin, credits and
 * keys): the shared statements of store/sql/, prepared once per connection.
 */
import type { AccountRow, AdminRepo, CreditStore, KeyRow, KeyStore, LedgerEntry, LedgerRow, SendProfile } from '../../otp/ports/index.ts'
import type { KeyStatus, StoredKey } from '../../otp/types.ts'
import { ADMIN_SQL, accountSql, exactKey, keyIdOf, toAccount, toKeyRow, toLedgerRow } from '../sql/admin.ts'
import { CREDIT_SQL, toSendProfile } from '../sql/credits.ts'
import { SQLITE } from '../sql/dialect.ts'
import { KEY_SQL, toStoredKey } from '../sql/keys.ts'
import { num } from '../sql/values.ts'
import type { Db } from './db.ts'
import { type Prepared, prepareShared } from './shared-sql.ts'
import type { StaleSource } from './stale.ts'

export class SqliteKeyStore implements KeyStore {
  private readonly q: Record<'findByPrefix' | 'touch', Prepared>
  constructor(db: Db) {
    this.q = prepareShared(db.$client, { findByPrefix: KEY_SQL.findByPrefix, touch: KEY_SQL.touch })
  }
  async findByPrefix(prefix: string): Promise<StoredKey[]> {
    return this.q.findByPrefix.all(prefix).map(toStoredKey)
  }
  async touch(keyId: number, at: number): Promise<void> {
    this.q.touch.run(keyId, at)
  }
}

export class SqliteCreditStore implements CreditStore {
  private readonly q: Record<keyof typeof CREDIT_SQL, Prepared>
  /**
   * Send profiles (code length, name, language, autofill domain, fraud guard settings) read on every send, kept until the storage (storage.ts) reports that
   * the database may have changed under them (another connection committed,
   * a rollback, or an operator change through this process): never stale
   * inside a transaction.
   */
  private readonly profiles = new Map<number, SendProfile>()
  constructor(db: Db, tx: StaleSource) {
    tx.onStale(() => this.profiles.clear())
    this.q = prepareShared(db.$client, CREDIT_SQL)
  }
  async balance(accountId: number): Promise<number> {
    const row = this.q.balance.get(accountId)
    return row === null ? 0 : num(row.balance)
  }
  /** Drops the copies of send profiles (an operator changed an account through this connection). */
  forgetProfiles(): void {
    this.profiles.clear()
  }
  async codeLength(accountId: number): Promise<number | null> {
    return (await this.sendProfile(accountId)).codeLength
  }
  async sendProfile(accountId: number): Promise<SendProfile> {
    let p = this.profiles.get(accountId)
    if (p === undefined) {
      p = toSendProfile(this.q.sendProfile.get(accountId))
      this.profiles.set(accountId, p)
    }
    return p
  }
  async debit(e: Omit<LedgerEntry, 'kind'>): Promise<boolean> {
    // Callers run this inside a write transaction: the guarded move and its ledger row land together.
    if (this.q.debit.run(e.amount, e.accountId).changes !== 1) return false
    this.q.ledger.run(e.accountId, 'debit', e.amount, e.verificationId ?? null, e.note ?? null, e.at)
    return true
  }
  async post(e: LedgerEntry): Promise<void> {
    // Callers run this inside a write transaction: balance and ledger row move together.
    this.q.move.run(e.accountId, e.kind === 'debit' ? -e.amount : e.amount)
    this.q.ledger.run(e.accountId, e.kind, e.amount, e.verificationId ?? null, e.note ?? null, e.at)
  }
}

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
  async setMessaging(accountId: number, change: { locale?: string | null; otpDomain?: string | null }): Promise<void> {
    if (change.locale !== undefined) this.q.setLocale.run(accountId, change.locale)
    if (change.otpDomain !== undefined) this.q.setOtpDomain.run(accountId, change.otpDomain)
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
  async ledger(accountId: number, limit: number): Promise<LedgerRow[]> {
    return this.q.ledger.all(accountId, limit).map(toLedgerRow)
  }
}
