/**
 * Verifications table (otp/ports/verifications.ts VerificationStore): the
 * shared statements of store/sql/verifications.ts, prepared once per
 * connection: every send and verify runs them.
 *
 * Rows are found by their number (`seq`, the rowid), which ids carry
 * (lib/verification-id.ts). The last number handed out is remembered between
 * transactions, and read again once the storage (storage.ts) says another connection
 * wrote or a rollback undid a write (`onStale`), as SqliteKeyHitLog does.
 */
import type { RecordedReceipt, UnsettledSend, VerificationStore } from '../../otp/ports/index.ts'
import type { DeliveryDetail, DeliveryState, ReceiptState, Verification } from '../../otp/types.ts'
import { ascendingTimes } from '../sql/values.ts'
import { insertParams, toUnsettled, toVerification, VERIFICATION_SQL } from '../sql/verifications.ts'
import type { Db } from './db.ts'
import { type Prepared, prepareShared } from './shared-sql.ts'
import type { StaleSource } from './stale.ts'

export class SqliteVerificationStore implements VerificationStore {
  private readonly q: Record<keyof typeof VERIFICATION_SQL, Prepared>
  private readonly lastSeqQ
  private lastSeq: number | undefined

  /** `onInsert`: told of each verification inserted (the event outbox's sequence copy). */
  constructor(
    db: Db,
    tx: StaleSource,
    private readonly onInsert: (v: Verification) => void = () => {},
  ) {
    tx.onStale(() => (this.lastSeq = undefined))
    this.q = prepareShared(db.$client, VERIFICATION_SQL)
    // SQLite's own: it numbers rows itself, under its single writer (PostgreSQL draws them from a sequence).
    this.lastSeqQ = db.$client.prepare<{ seq: number | null }, []>('SELECT max(seq) AS seq FROM verifications')
  }

  async nextSeq(): Promise<number> {
    // Taken only by the insert: a send refused after drawing it leaves no unused number
    // (writes run one after another on the single writer, store/sqlite/storage.ts).
    this.lastSeq ??= this.lastSeqQ.get()?.seq ?? 0
    return this.lastSeq + 1
  }
  async insert(v: Verification): Promise<void> {
    this.q.insert.run(...insertParams(v))
    if (this.lastSeq !== undefined) this.lastSeq = Math.max(this.lastSeq, v.seq)
    this.onInsert(v)
  }
  async findForKey(id: string, seq: number | null, keyId: number): Promise<Verification | undefined> {
    const row = (seq === null ? null : this.q.findForKey.get(seq, id, keyId)) ?? this.q.findLegacy.get(id, keyId)
    return row === null ? undefined : toVerification(row)
  }
  async recipientSendTimes(recipientHash: Uint8Array, since: number): Promise<number[]> {
    return ascendingTimes(this.q.recipientSendTimes.all(recipientHash, since), 'created_at')
  }
  async markUsed(seq: number, at: number): Promise<void> {
    this.q.markUsed.run(seq, at)
  }
  async cancel(seq: number): Promise<void> {
    this.q.cancel.run(seq)
  }
  async setAttempts(seq: number, failedAttempts: number, lockedUntil: number | null): Promise<void> {
    this.q.setAttempts.run(seq, failedAttempts, lockedUntil)
  }
  async findById(id: string, seq: number): Promise<Verification | undefined> {
    const row = this.q.findById.get(seq, id)
    return row === null ? undefined : toVerification(row)
  }
  async recordReceipt(seq: number, x: RecordedReceipt): Promise<boolean> {
    return this.q.recordReceipt.run(seq, x.state, x.provider, x.at, x.ref, x.error?.code ?? null, x.error?.title ?? null).changes === 1
  }
  async findByRef(provider: string, ref: string): Promise<{ seq: number; id: string } | undefined> {
    const row = this.q.findByRef.get(ref, provider)
    return row ? { seq: Number(row.seq), id: row.id as string } : undefined
  }
  async settleDelivery(
    seq: number,
    state: Exclude<DeliveryState, 'sending' | ReceiptState>,
    provider: string | null,
    at: number,
    detail?: DeliveryDetail,
  ): Promise<Verification | null> {
    const row = this.q.settleDelivery.get(seq, state, provider, at, detail?.ref ?? null, detail?.language ?? null)
    return row ? toVerification(row) : null
  }
  async unsettled(before: number, limit: number): Promise<UnsettledSend[]> {
    return this.q.unsettled.all(before, limit).map(toUnsettled)
  }
}
