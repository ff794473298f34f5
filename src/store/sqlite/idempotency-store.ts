/**
 * Idempotency-Key records (otp/ports.ts IdempotencyStore, schema.ts
 * idempotency_keys). Called inside the operation's IMMEDIATE transaction, so
 * a look-up and the insert that follows it cannot interleave with another
 * connection's: the unique index is a second line, never the decider.
 */
import type { IdempotencyRecord, IdempotencyScope, IdempotencyStore, StoredAnswer } from '../../otp/ports/index.ts'
import type { Db } from './db.ts'

interface Row {
  fingerprint: Uint8Array
  state: 'running' | 'done'
  status: number
  body: string
  createdAt: number
}

export class SqliteIdempotencyStore implements IdempotencyStore {
  private readonly findQ
  private readonly saveQ
  private readonly settleQ

  constructor(db: Db) {
    const c = db.$client
    this.findQ = c.prepare<Row, [number, string, string, string, number]>(
      `SELECT fingerprint, state, status, body, created_at AS createdAt FROM idempotency_keys
       WHERE key_id = ?1 AND method = ?2 AND path = ?3 AND idempotency_key = ?4 AND created_at > ?5`,
    )
    // An expired record of the scope (not yet swept) is replaced.
    this.saveQ = c.prepare<unknown, [number, string, string, string, Uint8Array, string, number, string, number | null, number]>(
      `INSERT INTO idempotency_keys (key_id, method, path, idempotency_key, fingerprint, state, status, body, verification_seq, created_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
       ON CONFLICT (key_id, method, path, idempotency_key) DO UPDATE SET
         fingerprint = excluded.fingerprint, state = excluded.state, status = excluded.status, body = excluded.body,
         verification_seq = excluded.verification_seq, created_at = excluded.created_at`,
    )
    this.settleQ = c.prepare<unknown, [number, number | null, string | null]>(
      `UPDATE idempotency_keys SET state = 'done', status = coalesce(?2, status), body = coalesce(?3, body)
       WHERE verification_seq = ?1 AND state = 'running'`,
    )
  }

  async find(scope: IdempotencyScope, since: number): Promise<IdempotencyRecord | undefined> {
    const row = this.findQ.get(scope.keyId, scope.method, scope.path, scope.key, since)
    if (!row) return undefined
    return { fingerprint: row.fingerprint, state: row.state, answer: { status: row.status, body: row.body }, createdAt: row.createdAt }
  }

  async save(scope: IdempotencyScope, record: IdempotencyRecord, verificationSeq: number | null): Promise<void> {
    const { fingerprint, state, answer, createdAt } = record
    this.saveQ.run(scope.keyId, scope.method, scope.path, scope.key, fingerprint, state, answer.status, answer.body, verificationSeq, createdAt)
  }

  async settle(verificationSeq: number, answer: StoredAnswer | null): Promise<void> {
    this.settleQ.run(verificationSeq, answer?.status ?? null, answer?.body ?? null)
  }
}
