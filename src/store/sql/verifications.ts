/**
 * The verifications table (otp/ports/verifications.ts VerificationStore):
 * the statements both engines run, and the one row mapper. The rules of
 * single use, cancel, delivery settlement and receipts live in these texts.
 */
import type { UnsettledSend } from '../../otp/ports/index.ts'
import type { SmsEncoding } from '../../lib/sms-encoding.ts'
import type { Verification } from '../../otp/types.ts'
import { bool, bytes, num, numOrNull, type Param, type Row } from './values.ts'

export const VERIFICATION_COLUMNS = `v.seq, v.id, v.key_id, v.account_id, v.channel, v.recipient_hash, v.recipient_mask, v.code_hash, v.test_mode, v.status,
  v.charged, v.created_at, v.expires_at, v.used_at, v.failed_attempts, v.locked_until, v.delivery, v.delivery_provider, v.delivery_updated_at,
  v.sms_encoding, v.sms_segments, v.country, v.fraud_monitored, v.delivery_ref, v.delivery_language, v.delivery_error_code, v.delivery_error_title, v.checked_by`

export const VERIFICATION_SQL = {
  insert: `INSERT INTO verifications (seq, id, key_id, account_id, channel, recipient_hash, recipient_mask, code_hash, test_mode, status,
      charged, created_at, expires_at, used_at, failed_attempts, locked_until, delivery, delivery_provider, delivery_updated_at, sms_encoding, sms_segments,
      country, fraud_monitored, checked_by)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24)`,
  findForKey: `SELECT ${VERIFICATION_COLUMNS} FROM verifications v WHERE v.seq = $1 AND v.id = $2 AND v.key_id = $3`,
  // A subquery, not a join: SQLite plans the join far slower, and every unknown
  // id comes here (docs/benchmarks.md#small-costs-on-the-request-path). The row
  // must still have the id (`v.id`): its number may have been given again.
  findLegacy: `SELECT ${VERIFICATION_COLUMNS} FROM verifications v
    WHERE v.seq = (SELECT l.seq FROM verification_legacy_ids l WHERE l.id = $1) AND v.id = $1 AND v.key_id = $2`,
  findById: `SELECT ${VERIFICATION_COLUMNS} FROM verifications v WHERE v.seq = $1 AND v.id = $2`,
  // A canceled send still counts: it was delivered, and canceling must not buy
  // more codes. No ORDER BY: the caller sorts (an ORDER BY costs SQLite a
  // sorter even for no rows).
  recipientSendTimes: `SELECT created_at FROM verifications
    WHERE recipient_hash = $1 AND created_at > $2 AND status <> 'failed' AND test_mode IS NULL`,
  markUsed: 'UPDATE verifications SET used_at = $2, failed_attempts = 0, locked_until = NULL WHERE seq = $1',
  setAttempts: 'UPDATE verifications SET failed_attempts = $2, locked_until = $3 WHERE seq = $1',
  // Only an active one: a failed delivery stays failed.
  cancel: "UPDATE verifications SET status = 'canceled' WHERE seq = $1 AND status = 'active'",
  // Only a delivery still `sending`: a second settlement (recovery, another
  // node) changes nothing. A failed delivery also takes the verification out
  // of use (verify answers 404); a canceled one stays canceled.
  settleDelivery: `UPDATE verifications SET delivery = $2, delivery_provider = $3, delivery_updated_at = $4, delivery_ref = $5, delivery_language = $6,
      status = CASE WHEN $2 = 'failed' AND status = 'active' THEN 'failed' ELSE status END
    WHERE seq = $1 AND delivery = 'sending'
    RETURNING ${VERIFICATION_COLUMNS.replaceAll('v.', '')}`,
  // A receipt while the send is still `sending` (it can outrun the send's own
  // record of `accepted`) is recorded, and that later record then changes
  // nothing, since it only moves a delivery that is `sending`. So is one for
  // an `unknown` delivery (otpd stopped before it learnt the outcome): the
  // vendor's word is what the operator lacks, and the refund stays. An
  // `accepted` delivery takes the receipt of its own provider only; a final
  // status stays, and a `failed` one (refunded) is kept. A receipt that says
  // only `accepted` (Meta's `sent`) moves nothing past it: a status never moves back.
  recordReceipt: `UPDATE verifications SET delivery = $2, delivery_provider = $3, delivery_updated_at = $4,
      delivery_ref = COALESCE($5, delivery_ref), delivery_error_code = $6, delivery_error_title = $7
    WHERE seq = $1 AND (delivery IN ('sending', 'unknown') OR (delivery = 'accepted' AND delivery_provider = $3 AND $2 <> 'accepted'))`,
  // Receipts that name only the vendor's message id (Meta's statuses).
  findByRef: 'SELECT seq, id FROM verifications WHERE delivery_ref = $1 AND delivery_provider = $2',
  // A workflow's later step started its delivery after the row was created (docs/api.md#workflows): its own start counts.
  unsettled: `SELECT seq, id, account_id FROM verifications WHERE delivery = 'sending' AND created_at <= $1 AND coalesce(delivery_updated_at, created_at) <= $1
    ORDER BY created_at LIMIT $2`,
} as const

/** The values of `VERIFICATION_SQL.insert`, in its order. */
export function insertParams(v: Verification): Param[] {
  return [
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
    v.sms?.encoding ?? null,
    v.sms?.segments ?? null,
    v.country ?? null,
    v.fraudMonitored ?? null,
    v.checkedBy ?? null,
  ]
}

/** A row of VERIFICATION_COLUMNS, from either engine. */
export function toVerification(r: Row): Verification {
  const v: Verification = {
    seq: num(r.seq),
    id: r.id as string,
    keyId: num(r.key_id),
    accountId: num(r.account_id),
    channel: r.channel as Verification['channel'],
    recipientHash: bytes(r.recipient_hash),
    recipientMask: r.recipient_mask as string,
    codeHash: bytes(r.code_hash),
    testMode: r.test_mode as Verification['testMode'],
    status: r.status as Verification['status'],
    charged: bool(r.charged),
    createdAt: num(r.created_at),
    expiresAt: num(r.expires_at),
    usedAt: numOrNull(r.used_at),
    failedAttempts: num(r.failed_attempts),
    lockedUntil: numOrNull(r.locked_until),
    delivery: r.delivery as Verification['delivery'],
    deliveryProvider: r.delivery_provider as string | null,
    deliveryUpdatedAt: numOrNull(r.delivery_updated_at),
    country: (r.country as string | null | undefined) ?? null,
    fraudMonitored: (r.fraud_monitored as string | null | undefined) ?? null,
  }
  if (r.checked_by != null) v.checkedBy = r.checked_by as string
  // Only an SMS has one, only some vendors give the rest: the other rows read as they did before these existed.
  if (r.sms_encoding != null) v.sms = { encoding: r.sms_encoding as SmsEncoding, segments: num(r.sms_segments) }
  if (r.delivery_ref != null) v.deliveryRef = r.delivery_ref as string
  if (r.delivery_language != null) v.deliveryLanguage = r.delivery_language as string
  if (r.delivery_error_code != null) v.deliveryError = { code: r.delivery_error_code as string, title: (r.delivery_error_title as string | null) ?? '' }
  return v
}

export function toUnsettled(r: Row): UnsettledSend {
  return { seq: num(r.seq), id: r.id as string, accountId: num(r.account_id) }
}
