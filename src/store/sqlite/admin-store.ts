/** Accounts, API keys and the credit ledger (see otp/admin.ts and otp/ports.ts). */
import { asc, desc, eq, or, sql } from 'drizzle-orm'
import type { AccountRow, AdminRepo, CreditStore, KeyRow, KeyStore, LedgerRow } from '../../otp/ports/index.ts'
import type { KeyStatus, StoredKey } from '../../otp/types.ts'
import type { Db } from './db.ts'
import { accounts, apiKeys, creditLedger } from './schema.ts'
import type { StaleSource } from './stale.ts'

const p = (name: string) => sql.placeholder(name)

export class SqliteKeyStore implements KeyStore {
  private readonly byPrefix
  private readonly touchQ
  constructor(db: Db) {
    this.touchQ = db
      .update(apiKeys)
      .set({ lastUsedAt: sql`${p('at')}` })
      .where(eq(apiKeys.id, p('id')))
      .prepare()
    this.byPrefix = db
      .select({ id: apiKeys.id, accountId: apiKeys.accountId, prefix: apiKeys.prefix, status: apiKeys.status, keyHash: apiKeys.keyHash })
      .from(apiKeys)
      .where(eq(apiKeys.prefix, p('prefix')))
      .prepare()
  }
  async findByPrefix(prefix: string): Promise<StoredKey[]> {
    return this.byPrefix.all({ prefix })
  }
  async touch(keyId: number, at: number): Promise<void> {
    this.touchQ.run({ id: keyId, at })
  }
}

export class SqliteCreditStore implements CreditStore {
  private readonly balanceQ
  private readonly codeLengthQ
  private readonly ledgerQ
  private readonly moveQ
  private readonly debitQ
  /**
   * Code lengths read on every send, kept until the storage (storage.ts) reports that
   * the database may have changed under them (another connection committed,
   * a rollback, or an operator change through this process): never stale
   * inside a transaction.
   */
  private readonly codeLengths = new Map<number, number | null>()
  constructor(db: Db, tx: StaleSource) {
    tx.onStale(() => this.codeLengths.clear())
    this.debitQ = db.$client.prepare<unknown, [number, number]>('UPDATE accounts SET balance = balance - ?1 WHERE id = ?2 AND balance >= ?1')
    this.balanceQ = db
      .select({ balance: accounts.balance })
      .from(accounts)
      .where(eq(accounts.id, p('id')))
      .prepare()
    this.codeLengthQ = db
      .select({ codeLength: accounts.codeLength })
      .from(accounts)
      .where(eq(accounts.id, p('id')))
      .prepare()
    // bun:sqlite directly: a debit row is written on every send.
    this.ledgerQ = db.$client.prepare<unknown, [number, string, number, string | null, string | null, number]>(
      'INSERT INTO credit_ledger (account_id, kind, amount, verification_id, note, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)',
    )
    this.moveQ = db
      .update(accounts)
      .set({ balance: sql`${accounts.balance} + ${p('delta')}` })
      .where(eq(accounts.id, p('id')))
      .prepare()
  }
  async balance(accountId: number): Promise<number> {
    return this.balanceQ.get({ id: accountId })?.balance ?? 0
  }
  /** Drops the copies of code lengths (an operator changed one through this connection). */
  forgetCodeLengths(): void {
    this.codeLengths.clear()
  }
  async codeLength(accountId: number): Promise<number | null> {
    let length = this.codeLengths.get(accountId)
    if (length === undefined) {
      length = this.codeLengthQ.get({ id: accountId })?.codeLength ?? null
      this.codeLengths.set(accountId, length)
    }
    return length
  }
  async debit(e: Parameters<CreditStore['debit']>[0]): Promise<boolean> {
    // Callers run this inside a write transaction: the guarded move and its ledger row land together.
    if (this.debitQ.run(e.amount, e.accountId).changes !== 1) return false
    this.ledgerQ.run(e.accountId, 'debit', e.amount, e.verificationId ?? null, e.note ?? null, e.at)
    return true
  }
  async post(e: Parameters<CreditStore['post']>[0]): Promise<void> {
    // Callers run this inside a write transaction: ledger row and balance move together.
    this.ledgerQ.run(e.accountId, e.kind, e.amount, e.verificationId ?? null, e.note ?? null, e.at)
    this.moveQ.run({ id: e.accountId, delta: e.kind === 'debit' ? -e.amount : e.amount })
  }
}

export class SqliteAdminStore implements AdminRepo {
  /** `codeLengthChanged`: the credit store's copy of code lengths is dropped when one is written. */
  constructor(
    private readonly db: Db,
    private readonly codeLengthChanged: () => void = () => {},
  ) {}

  async findAccount(name: string): Promise<AccountRow | undefined> {
    return this.db.select().from(accounts).where(eq(accounts.name, name)).get()
  }
  async listAccounts(): Promise<AccountRow[]> {
    return this.db.select().from(accounts).orderBy(asc(accounts.id)).all()
  }
  async insertAccount(name: string, at: number): Promise<AccountRow> {
    return this.db.insert(accounts).values({ name, createdAt: at }).returning().get()
  }
  async setCodeLength(accountId: number, length: number): Promise<void> {
    this.db.update(accounts).set({ codeLength: length }).where(eq(accounts.id, accountId)).run()
    this.codeLengthChanged()
  }
  async insertKey(k: { accountId: number; name: string; prefix: string; keyHash: string; at: number }): Promise<number> {
    const row = this.db
      .insert(apiKeys)
      .values({ accountId: k.accountId, name: k.name, prefix: k.prefix, keyHash: k.keyHash, createdAt: k.at })
      .returning({ id: apiKeys.id })
      .get()
    return row.id
  }
  private keyRows() {
    return this.db
      .select({
        id: apiKeys.id,
        account: accounts.name,
        name: apiKeys.name,
        prefix: apiKeys.prefix,
        status: apiKeys.status,
        createdAt: apiKeys.createdAt,
        lastUsedAt: apiKeys.lastUsedAt,
      })
      .from(apiKeys)
      .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
  }
  async listKeys(accountId?: number): Promise<KeyRow[]> {
    const q = this.keyRows()
    return (accountId === undefined ? q : q.where(eq(apiKeys.accountId, accountId))).orderBy(asc(apiKeys.id)).all()
  }
  async findKeys(idOrPrefix: string): Promise<KeyRow[]> {
    const byId = /^[0-9]{1,15}$/.test(idOrPrefix) ? eq(apiKeys.id, Number(idOrPrefix)) : undefined
    const rows = this.keyRows()
      .where(byId ? or(byId, eq(apiKeys.prefix, idOrPrefix)) : eq(apiKeys.prefix, idOrPrefix))
      .all()
    // A numeric id wins over a prefix that happens to be all digits.
    const exact = rows.filter((r) => String(r.id) === idOrPrefix)
    return exact.length === 1 ? exact : rows
  }
  async setKeyStatus(id: number, status: KeyStatus): Promise<void> {
    this.db.update(apiKeys).set({ status }).where(eq(apiKeys.id, id)).run()
  }
  async ledger(accountId: number, limit: number): Promise<LedgerRow[]> {
    return this.db
      .select({
        id: creditLedger.id,
        kind: creditLedger.kind,
        amount: creditLedger.amount,
        verificationId: creditLedger.verificationId,
        note: creditLedger.note,
        createdAt: creditLedger.createdAt,
      })
      .from(creditLedger)
      .where(eq(creditLedger.accountId, accountId))
      .orderBy(desc(creditLedger.id))
      .limit(limit)
      .all()
  }
}
