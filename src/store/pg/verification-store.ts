/**
 * Verifications table (see otp/ports.ts VerificationStore and
 * store/sqlite/verification-store.ts). Numbers come from the sequence
 * `verifications_seq`, so nodes never wait for one another to number a row.
 * Inside a write, findForKey locks the row it returns (`FOR UPDATE`): two
 * attempts on one code, on any nodes, run one after the other, and the second
 * sees the first's outcome (single use, attempts, lockout). recipientSendTimes
 * takes the recipient's lock first (store/pg/locks.ts).
 */
import type { UnsettledSend, VerificationStore } from '../../otp/ports/index.ts'
import type { DeliveryState, ReceiptState, Verification } from '../../otp/types.ts'
import { num, numOrNull, type Tx } from './client.ts'
import type { TxLocks } from './locks.ts'

export const COLUMNS = `v.seq, v.id, v.key_id, v.account_id, v.channel, v.recipient_hash, v.recipient_mask, v.code_hash, v.test_mode, v.status,
  v.charged, v.created_at, v.expires_at, v.used_at, v.failed_attempts, v.locked_until, v.delivery, v.delivery_provider, v.delivery_updated_at`

type Row = Record<string, unknown>

export function toVerification(r: Row): Verification {
  return {
    seq: num(r.seq),
    id: r.id as string,
    keyId: num(r.key_id),
    accountId: num(r.account_id),
    channel: r.channel as Verification['channel'],
    recipientHash: new Uint8Array(r.recipient_hash as Uint8Array),
    recipientMask: r.recipient_mask as string,
    codeHash: new Uint8Array(r.code_hash as Uint8Array),
    testMode: r.test_mode as Verification['testMode'],
    status: r.status as Verification['status'],
    charged: r.charged === true,
    createdAt: num(r.created_at),
    expiresAt: num(r.expires_at),
    usedAt: numOrNull(r.used_at),
    failedAttempts: num(r.failed_attempts),
    lockedUntil: numOrNull(r.locked_until),
    delivery: r.delivery as Verification['delivery'],
    deliveryProvider: r.delivery_provider as string | null,
    deliveryUpdatedAt: numOrNull(r.delivery_updated_at),
  }
}

export class PgVerificationStore implements VerificationStore {
  private readonly lock: string
  constructor(
    private readonly tx: Tx,
    private readonly locks: TxLocks,
  ) {
    this.lock = locks.locking ? ' FOR UPDATE OF v' : ''
  }

  async nextSeq(): Promise<number> {
    // A parameter, so that it goes prepared (a statement without one is a slower simple query, store/pg/client.ts).
    const rows = await this.tx.q<{ seq: unknown }>('SELECT nextval($1::regclass) AS seq', ['verifications_seq'])
    return num(rows[0]!.seq)
  }
  async insert(v: Verification): Promise<void> {
    this.tx.exec(
      `INSERT INTO verifications (seq, id, key_id, account_id, channel, recipient_hash, recipient_mask, code_hash, test_mode, status,
         charged, created_at, expires_at, used_at, failed_attempts, locked_until, delivery, delivery_provider, delivery_updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
      [
        v.seq,
        v.id,
        v.keyId,
        v.accountId,
        v.channel,
        v.recipientHash,
        v.recipientMask,
        v.codeHash,
        v.testMode,
        v.status,
        v.charged,
        v.createdAt,
        v.expiresAt,
        v.usedAt,
        v.failedAttempts,
        v.lockedUntil,
        v.delivery,
        v.deliveryProvider,
        v.deliveryUpdatedAt,
      ],
    )
    // A row this transaction inserted is its own until the commit (an event about it needs no lock, store/pg/event-store.ts).
    this.locks.holdsVerification(v.seq)
  }
  async findForKey(id: string, seq: number | null, keyId: number): Promise<Verification | undefined> {
    // PostgreSQL text cannot hold NUL (it refuses the parameter); no stored id has one.
    if (id.includes('\u0000')) return undefined
    let rows: Row[] = []
    if (seq !== null)
      rows = await this.tx.q(`SELECT ${COLUMNS} FROM verifications v WHERE v.seq = $1 AND v.id = $2 AND v.key_id = $3${this.lock}`, [seq, id, keyId])
    if (rows.length === 0) {
      rows = await this.tx.q(
        `SELECT ${COLUMNS} FROM verifications v
         WHERE v.seq = (SELECT l.seq FROM verification_legacy_ids l WHERE l.id = $1) AND v.id = $1 AND v.key_id = $2${this.lock}`,
        [id, keyId],
      )
    }
    if (rows[0] !== undefined) this.locks.holdsVerification(num(rows[0].seq))
    return rows[0] === undefined ? undefined : toVerification(rows[0])
  }
  async recipientSendTimes(recipientHash: Uint8Array, since: number): Promise<number[]> {
    await this.locks.recipient(recipientHash)
    const rows = await this.tx.q<{ at: unknown }>(
      `SELECT created_at AS at FROM verifications
       WHERE recipient_hash = $1 AND created_at > $2 AND status <> 'failed' AND test_mode IS NULL ORDER BY created_at`,
      [recipientHash, since],
    )
    return rows.map((r) => num(r.at))
  }
  async markUsed(seq: number, at: number): Promise<void> {
    this.tx.exec('UPDATE verifications SET used_at = $2, failed_attempts = 0, locked_until = NULL WHERE seq = $1', [seq, at])
  }
  async setAttempts(seq: number, failedAttempts: number, lockedUntil: number | null): Promise<void> {
    this.tx.exec('UPDATE verifications SET failed_attempts = $2, locked_until = $3 WHERE seq = $1', [seq, failedAttempts, lockedUntil])
  }
  async settleDelivery(seq: number, state: Exclude<DeliveryState, 'sending' | ReceiptState>, provider: string | null, at: number): Promise<boolean> {
    // The row's own lock makes the `sending` check exact: a second settlement (another node's recovery) changes nothing.
    const n = await this.tx.run(
      `UPDATE verifications SET delivery = $2, delivery_provider = $3, delivery_updated_at = $4,
         status = CASE WHEN $2 = 'failed' AND status = 'active' THEN 'failed' ELSE status END
       WHERE seq = $1 AND delivery = 'sending'`,
      [seq, state, provider, at],
    )
    if (n === 1) this.locks.holdsVerification(seq)
    return n === 1
  }
  async unsettled(before: number, limit: number): Promise<UnsettledSend[]> {
    const rows = await this.tx.q<Row>(
      `SELECT seq, id, account_id FROM verifications WHERE delivery = 'sending' AND created_at <= $1 ORDER BY created_at LIMIT $2`,
      [before, limit],
    )
    return rows.map((r) => ({ seq: num(r.seq), id: r.id as string, accountId: num(r.account_id) }))
  }

  // Issue 23 (status, cancel, receipts), as store/sqlite/verification-store.ts.
  /** Only an active one: a failed delivery stays failed. The row is locked by findForKey in the same transaction. */
  async cancel(seq: number): Promise<void> {
    this.tx.exec("UPDATE verifications SET status = 'canceled' WHERE seq = $1 AND status = 'active'", [seq])
  }
  /** Inside a write, locks the row (`FOR UPDATE`): a receipt and the send's own settlement, on any nodes, run one after the other. */
  async findById(id: string, seq: number): Promise<Verification | undefined> {
    if (id.includes('\u0000')) return undefined
    const rows = await this.tx.q<Row>(`SELECT ${COLUMNS} FROM verifications v WHERE v.seq = $1 AND v.id = $2${this.lock}`, [seq, id])
    if (rows[0] !== undefined) this.locks.holdsVerification(seq)
    return rows[0] === undefined ? undefined : toVerification(rows[0])
  }
  /**
   * The first final status stays: one conditional UPDATE, which PostgreSQL
   * re-checks on the newest row version after waiting for another receipt's
   * lock. A receipt that outruns the send's record of `accepted` is recorded,
   * and that record then changes nothing (it only moves a `sending` delivery);
   * so is one for an `unknown` delivery (otpd stopped before it learnt the outcome).
   */
  async recordReceipt(seq: number, state: ReceiptState, provider: string, at: number): Promise<boolean> {
    const n = await this.tx.run(
      `UPDATE verifications SET delivery = $2, delivery_provider = $3, delivery_updated_at = $4
       WHERE seq = $1 AND (delivery IN ('sending', 'unknown') OR (delivery = 'accepted' AND delivery_provider = $3))`,
      [seq, state, provider, at],
    )
    if (n === 1) this.locks.holdsVerification(seq)
    return n === 1
  }
}
