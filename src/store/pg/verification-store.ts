/**
 * Verifications table (otp/ports/verifications.ts VerificationStore): the
 * shared statements of store/sql/verifications.ts. Numbers come from the
 * sequence `verifications_seq`, so nodes never wait for one another to number
 * a row. Inside a write, findForKey locks the row it returns (`FOR UPDATE`):
 * two attempts on one code, on any nodes, run one after the other, and the
 * second sees the first's outcome (single use, attempts, lockout).
 * recipientSendTimes takes the recipient's lock first (store/pg/locks.ts).
 */
import type { RecordedReceipt, UnsettledSend, VerificationStore } from '../../otp/ports/index.ts'
import type { DeliveryDetail, DeliveryState, ReceiptState, Verification } from '../../otp/types.ts'
import { ascendingTimes, num } from '../sql/values.ts'
import { insertParams, toUnsettled, toVerification, VERIFICATION_SQL as SQL } from '../sql/verifications.ts'
import type { Tx } from './client.ts'
import type { TxLocks } from './locks.ts'

/** PostgreSQL's own: inside a write, a row read is locked for the rest of the transaction (store/pg/locks.ts). */
const FOR_UPDATE = ' FOR UPDATE OF v'
const FIND = { plain: SQL.findForKey, locked: SQL.findForKey + FOR_UPDATE }
const FIND_LEGACY = { plain: SQL.findLegacy, locked: SQL.findLegacy + FOR_UPDATE }
const FIND_BY_ID = { plain: SQL.findById, locked: SQL.findById + FOR_UPDATE }

export class PgVerificationStore implements VerificationStore {
  private readonly mode: 'plain' | 'locked'
  constructor(
    private readonly tx: Tx,
    private readonly locks: TxLocks,
  ) {
    this.mode = locks.locking ? 'locked' : 'plain'
  }

  async nextSeq(): Promise<number> {
    // PostgreSQL's own: a sequence, where SQLite counts from max(seq) under its single writer.
    // A parameter, so that it goes prepared (a statement without one is a slower simple query, store/pg/client.ts).
    const rows = await this.tx.q<{ seq: unknown }>('SELECT nextval($1::regclass) AS seq', ['verifications_seq'])
    return num(rows[0]!.seq)
  }
  async insert(v: Verification): Promise<void> {
    this.tx.exec(SQL.insert, insertParams(v))
    // A row this transaction inserted is its own until the commit (an event about it needs no lock, store/pg/event-store.ts).
    this.locks.holdsVerification(v.seq)
  }
  async findForKey(id: string, seq: number | null, keyId: number): Promise<Verification | undefined> {
    // PostgreSQL text cannot hold NUL (it refuses the parameter); no stored id has one.
    if (id.includes('\u0000')) return undefined
    let rows: Record<string, unknown>[] = []
    if (seq !== null) rows = await this.tx.q(FIND[this.mode], [seq, id, keyId])
    if (rows.length === 0) rows = await this.tx.q(FIND_LEGACY[this.mode], [id, keyId])
    if (rows[0] === undefined) return undefined
    const v = toVerification(rows[0])
    this.locks.holdsVerification(v.seq)
    return v
  }
  async recipientSendTimes(recipientHash: Uint8Array, since: number): Promise<number[]> {
    await this.locks.recipient(recipientHash)
    return ascendingTimes(await this.tx.q(SQL.recipientSendTimes, [recipientHash, since]), 'created_at')
  }
  async markUsed(seq: number, at: number): Promise<void> {
    this.tx.exec(SQL.markUsed, [seq, at])
  }
  async setAttempts(seq: number, failedAttempts: number, lockedUntil: number | null): Promise<void> {
    this.tx.exec(SQL.setAttempts, [seq, failedAttempts, lockedUntil])
  }
  async settleDelivery(
    seq: number,
    state: Exclude<DeliveryState, 'sending' | ReceiptState>,
    provider: string | null,
    at: number,
    detail?: DeliveryDetail,
  ): Promise<Verification | null> {
    // The row's own lock makes the `sending` check exact: a second settlement (another node's recovery) changes nothing.
    const rows = await this.tx.q<Record<string, unknown>>(SQL.settleDelivery, [seq, state, provider, at, detail?.ref ?? null, detail?.language ?? null])
    if (rows[0] === undefined) return null
    this.locks.holdsVerification(seq)
    return toVerification(rows[0])
  }
  async unsettled(before: number, limit: number): Promise<UnsettledSend[]> {
    return (await this.tx.q(SQL.unsettled, [before, limit])).map(toUnsettled)
  }
  /** The row is locked by findForKey in the same transaction. */
  async cancel(seq: number): Promise<void> {
    this.tx.exec(SQL.cancel, [seq])
  }
  /** Inside a write, locks the row (`FOR UPDATE`): a receipt and the send's own settlement, on any nodes, run one after the other. */
  async findById(id: string, seq: number): Promise<Verification | undefined> {
    if (id.includes('\u0000')) return undefined
    const rows = await this.tx.q(FIND_BY_ID[this.mode], [seq, id])
    if (rows[0] !== undefined) this.locks.holdsVerification(seq)
    return rows[0] === undefined ? undefined : toVerification(rows[0])
  }
  /**
   * The first final status stays: one conditional UPDATE, which PostgreSQL
   * re-checks on the newest row version after waiting for another receipt's
   * lock.
   */
  async recordReceipt(seq: number, x: RecordedReceipt): Promise<boolean> {
    const n = await this.tx.run(SQL.recordReceipt, [seq, x.state, x.provider, x.at, x.ref, x.error?.code ?? null, x.error?.title ?? null])
    if (n === 1) this.locks.holdsVerification(seq)
    return n === 1
  }
  /** No lock: the caller then reads the row with findById, which locks it. */
  async findByRef(provider: string, ref: string): Promise<{ seq: number; id: string } | undefined> {
    if (ref.includes('\u0000') || provider.includes('\u0000')) return undefined
    const rows = await this.tx.q<{ seq: unknown; id: string }>(SQL.findByRef, [ref, provider])
    return rows[0] === undefined ? undefined : { seq: num(rows[0].seq), id: rows[0].id }
  }
}
