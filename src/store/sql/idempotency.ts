/**
 * Idempotency-Key records (otp/ports/idempotency.ts IdempotencyStore): the
 * statements both engines run, and the row mapper.
 */
import type { IdempotencyRecord } from '../../otp/ports/index.ts'
import { bytes, num, type Row } from './values.ts'

export const IDEMPOTENCY_SQL = {
  /** The record of the scope ($1 key, $2 method, $3 path, $4 Idempotency-Key) made after $5: an older one has expired. */
  find: `SELECT fingerprint, state, status, body, created_at FROM idempotency_keys
    WHERE key_id = $1 AND method = $2 AND path = $3 AND idempotency_key = $4 AND created_at > $5`,
  /** An expired record of the scope (not yet swept) is replaced. */
  save: `INSERT INTO idempotency_keys (key_id, method, path, idempotency_key, fingerprint, state, status, body, verification_seq, created_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
    ON CONFLICT (key_id, method, path, idempotency_key) DO UPDATE SET
      fingerprint = excluded.fingerprint, state = excluded.state, status = excluded.status, body = excluded.body,
      verification_seq = excluded.verification_seq, created_at = excluded.created_at`,
  /** The running record of send $1 becomes `done`, with the answer $2/$3, or the one it holds when they are null. */
  settle: `UPDATE idempotency_keys SET state = 'done', status = coalesce($2, status), body = coalesce($3, body)
    WHERE verification_seq = $1 AND state = 'running'`,
} as const

export function toIdempotencyRecord(r: Row): IdempotencyRecord {
  return {
    fingerprint: bytes(r.fingerprint),
    state: r.state as IdempotencyRecord['state'],
    answer: { status: num(r.status), body: r.body as string },
    createdAt: num(r.created_at),
  }
}
