/** Balances, the credit ledger and send profiles (otp/ports/credits.ts): the shared statements of store/sql/credits.ts. */
import type { CreditStore, LedgerEntry, SendProfile } from '../../otp/ports/index.ts'
import { CREDIT_SQL, toSendProfile } from '../sql/credits.ts'
import { num } from '../sql/values.ts'
import type { Db } from './db.ts'
import { type Prepared, prepareShared } from './shared-sql.ts'
import type { StaleSource } from './stale.ts'

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
