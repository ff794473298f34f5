/** Balances, the credit ledger and send profiles (otp/ports/credits.ts): the shared statements of store/sql/credits.ts. */
import type { CreditStore, LedgerEntry, SendProfile } from '../../otp/ports/index.ts'
import { CREDIT_SQL, toSendProfile } from '../sql/credits.ts'
import { num, numOrNull } from '../sql/values.ts'
import { BALANCE_SQL, randomStripe } from './balances.ts'
import type { Tx } from './client.ts'

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
