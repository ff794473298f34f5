/**
 * Verifications table (see otp/ports.ts VerificationStore). Plain bun:sqlite
 * prepared statements: every send and verify runs them.
 *
 * Rows are found by their number (`seq`, the rowid), which ids carry
 * (lib/verification-id.ts). The last number handed out is remembered between
 * transactions, and read again once the storage (storage.ts) says another connection
 * wrote or a rollback undid a write (`onStale`), as SqliteKeyHitLog does.
 */
import type { UnsettledSend, VerificationStore } from '../../otp/ports/index.ts'
import type { DeliveryState, ReceiptState, Verification } from '../../otp/types.ts'
import type { Db } from './db.ts'
import type { StaleSource } from './stale.ts'

export type VerificationRow = Omit<Verification, 'charged'> & { charged: number }
type Row = VerificationRow

export const VERIFICATION_COLUMNS = `v.seq, v.id, v.key_id AS keyId, v.account_id AS accountId, v.channel, v.recipient_hash AS recipientHash,
  v.recipient_mask AS recipientMask, v.code_hash AS codeHash, v.test_mode AS testMode, v.status, v.charged,
  v.created_at AS createdAt, v.expires_at AS expiresAt, v.used_at AS usedAt, v.failed_attempts AS failedAttempts,
  v.locked_until AS lockedUntil, v.delivery, v.delivery_provider AS deliveryProvider, v.delivery_updated_at AS deliveryUpdatedAt`

export class SqliteVerificationStore implements VerificationStore {
  private readonly insertQ
  private readonly lastSeqQ
  private readonly findQ
  private readonly findLegacyQ
  private readonly sendTimesQ
  private readonly usedQ
  private readonly cancelQ
  private readonly attemptsQ
  private readonly settleQ
  private readonly unsettledQ
  private readonly findByIdQ
  private readonly receiptQ
  private lastSeq: number | undefined

  /** `onInsert`: told of each verification inserted (the event outbox's sequence copy). */
  constructor(
    db: Db,
    tx: StaleSource,
    private readonly onInsert: (v: Verification) => void = () => {},
  ) {
    const c = db.$client
    tx.onStale(() => (this.lastSeq = undefined))
    this.insertQ = c.prepare<unknown, [Record<string, string | number | Uint8Array | null>]>(
      `INSERT INTO verifications (seq, id, key_id, account_id, channel, recipient_hash, recipient_mask, code_hash, test_mode, status,
         charged, created_at, expires_at, used_at, failed_attempts, locked_until, delivery, delivery_provider, delivery_updated_at)
       VALUES ($seq, $id, $keyId, $accountId, $channel, $recipientHash, $recipientMask, $codeHash, $testMode, $status,
         $charged, $createdAt, $expiresAt, $usedAt, $failedAttempts, $lockedUntil, $delivery, $deliveryProvider, $deliveryUpdatedAt)`,
    )
    this.lastSeqQ = c.prepare<{ seq: number | null }, []>('SELECT max(seq) AS seq FROM verifications')
    this.findQ = c.prepare<Row, [number, string, number]>(
      `SELECT ${VERIFICATION_COLUMNS} FROM verifications v WHERE v.seq = ?1 AND v.id = ?2 AND v.key_id = ?3`,
    )
    // A subquery, not a join: the same two look-ups, but SQLite ran the join
    // form at 14 us where this takes about 1 (measured on an empty table), and
    // every unknown id comes here. The row must still have the id (`v.id`):
    // its number may have been given again to a newer verification.
    this.findLegacyQ = c.prepare<Row, [string, number]>(
      `SELECT ${VERIFICATION_COLUMNS} FROM verifications v
       WHERE v.seq = (SELECT l.seq FROM verification_legacy_ids l WHERE l.id = ?1) AND v.id = ?1 AND v.key_id = ?2`,
    )
    // A canceled send still counts: it was delivered, and canceling must not buy more codes.
    this.sendTimesQ = c.prepare<{ at: number }, [Uint8Array, number]>(
      `SELECT created_at AS at FROM verifications
       WHERE recipient_hash = ?1 AND created_at > ?2 AND status <> 'failed' AND test_mode IS NULL`,
    )
    this.usedQ = c.prepare<unknown, [number, number]>('UPDATE verifications SET used_at = ?2, failed_attempts = 0, locked_until = NULL WHERE seq = ?1')
    // Only an active one: a failed delivery stays failed.
    this.cancelQ = c.prepare<unknown, [number]>("UPDATE verifications SET status = 'canceled' WHERE seq = ?1 AND status = 'active'")
    this.attemptsQ = c.prepare<unknown, [number, number, number | null]>('UPDATE verifications SET failed_attempts = ?2, locked_until = ?3 WHERE seq = ?1')
    // A failed delivery also takes the verification out of use (verify answers 404).
    this.settleQ = c.prepare<unknown, [number, string, string | null, number]>(
      `UPDATE verifications SET delivery = ?2, delivery_provider = ?3, delivery_updated_at = ?4,
         status = CASE WHEN ?2 = 'failed' AND status = 'active' THEN 'failed' ELSE status END
       WHERE seq = ?1 AND delivery = 'sending'`,
    )
    this.findByIdQ = c.prepare<Row, [number, string]>(`SELECT ${VERIFICATION_COLUMNS} FROM verifications v WHERE v.seq = ?1 AND v.id = ?2`)
    // A receipt while the send is still `sending` (it can outrun the send's own
    // record of `accepted`) is recorded, and that later record then changes
    // nothing, since it only moves a delivery that is `sending`. So is one for
    // an `unknown` delivery (otpd stopped before it learnt the outcome): the
    // vendor's word is what the operator lacks.
    this.receiptQ = c.prepare<unknown, [number, string, string, number]>(
      `UPDATE verifications SET delivery = ?2, delivery_provider = ?3, delivery_updated_at = ?4
       WHERE seq = ?1 AND (delivery IN ('sending', 'unknown') OR (delivery = 'accepted' AND delivery_provider = ?3))`,
    )
    this.unsettledQ = c.prepare<UnsettledSend, [number, number]>(
      `SELECT seq, id, account_id AS accountId FROM verifications WHERE delivery = 'sending' AND created_at <= ?1 ORDER BY created_at LIMIT ?2`,
    )
  }

  async nextSeq(): Promise<number> {
    this.lastSeq ??= this.lastSeqQ.get()?.seq ?? 0
    return ++this.lastSeq
  }
  async insert(v: Verification): Promise<void> {
    this.insertQ.run({ ...v, charged: v.charged ? 1 : 0 })
    this.onInsert(v)
  }
  async findForKey(id: string, seq: number | null, keyId: number): Promise<Verification | undefined> {
    const row = (seq === null ? null : this.findQ.get(seq, id, keyId)) ?? this.findLegacyQ.get(id, keyId)
    return row === null ? undefined : { ...row, charged: row.charged === 1 }
  }
  async recipientSendTimes(recipientHash: Uint8Array, since: number): Promise<number[]> {
    // Sorted here: an ORDER BY costs SQLite a sorter (several times this look-up) even for no rows.
    return this.sendTimesQ
      .all(recipientHash, since)
      .map((r) => r.at)
      .sort((a, b) => a - b)
  }
  async markUsed(seq: number, at: number): Promise<void> {
    this.usedQ.run(seq, at)
  }
  async cancel(seq: number): Promise<void> {
    this.cancelQ.run(seq)
  }
  async setAttempts(seq: number, failedAttempts: number, lockedUntil: number | null): Promise<void> {
    this.attemptsQ.run(seq, failedAttempts, lockedUntil)
  }
  async findById(id: string, seq: number): Promise<Verification | undefined> {
    const row = this.findByIdQ.get(seq, id)
    return row === null ? undefined : { ...row, charged: row.charged === 1 }
  }
  async recordReceipt(seq: number, state: ReceiptState, provider: string, at: number): Promise<boolean> {
    return this.receiptQ.run(seq, state, provider, at).changes === 1
  }
  async settleDelivery(seq: number, state: Exclude<DeliveryState, 'sending' | ReceiptState>, provider: string | null, at: number): Promise<boolean> {
    return this.settleQ.run(seq, state, provider, at).changes === 1
  }
  async unsettled(before: number, limit: number): Promise<UnsettledSend[]> {
    return this.unsettledQ.all(before, limit)
  }
}
