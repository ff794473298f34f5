/**
 * Idempotency-Key records on PostgreSQL (otp/ports.ts IdempotencyStore, as
 * store/sqlite/idempotency-store.ts).
 *
 * Exact across nodes: SQLite's single writer keeps a look-up and the insert
 * after it together; here, inside a write, `find` first holds the row lock of
 * the scope's API key (store/pg/locks.ts; the per-key limit has mostly taken
 * it already), so two first requests with one key, on any nodes, run one
 * after the other, and the second's look-up, a statement after the lock,
 * sees the first's record: it gets the stored answer, or "in progress" while
 * the first's send is delivering. The unique index on the scope is the
 * second line. `save` runs only after a `find` that found no record in force,
 * under the same lock: the record it replaces, if any, has expired.
 */
import type { IdempotencyRecord, IdempotencyScope, IdempotencyStore, StoredAnswer } from '../../otp/ports/index.ts'
import { num, type Tx } from './client.ts'
import type { TxLocks } from './locks.ts'

interface Row {
  fingerprint: Uint8Array
  state: 'running' | 'done'
  status: unknown
  body: string
  created_at: unknown
}

export class PgIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly tx: Tx,
    private readonly locks: TxLocks,
  ) {}

  async find(scope: IdempotencyScope, since: number): Promise<IdempotencyRecord | undefined> {
    await this.locks.key(scope.keyId)
    const rows = await this.tx.q<Row>(
      `SELECT fingerprint, state, status, body, created_at FROM idempotency_keys
       WHERE key_id = $1 AND method = $2 AND path = $3 AND idempotency_key = $4 AND created_at > $5`,
      [scope.keyId, scope.method, storable(scope.path), storable(scope.key), since],
    )
    const row = rows[0]
    if (row === undefined) return undefined
    return {
      fingerprint: new Uint8Array(row.fingerprint),
      state: row.state,
      answer: { status: num(row.status), body: row.body },
      createdAt: num(row.created_at),
    }
  }

  async save(scope: IdempotencyScope, record: IdempotencyRecord, verificationSeq: number | null): Promise<void> {
    await this.locks.key(scope.keyId)
    const { fingerprint, state, answer, createdAt } = record
    // An expired record of the scope (not yet swept) is replaced.
    this.tx.exec(
      `INSERT INTO idempotency_keys (key_id, method, path, idempotency_key, fingerprint, state, status, body, verification_seq, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (key_id, method, path, idempotency_key) DO UPDATE SET
         fingerprint = excluded.fingerprint, state = excluded.state, status = excluded.status, body = excluded.body,
         verification_seq = excluded.verification_seq, created_at = excluded.created_at`,
      [scope.keyId, scope.method, storable(scope.path), storable(scope.key), fingerprint, state, answer.status, answer.body, verificationSeq, createdAt],
    )
  }

  async settle(verificationSeq: number, answer: StoredAnswer | null): Promise<void> {
    this.tx.exec(
      `UPDATE idempotency_keys SET state = 'done', status = coalesce($2, status), body = coalesce($3, body)
       WHERE verification_seq = $1 AND state = 'running'`,
      [verificationSeq, answer?.status ?? null, answer?.body ?? null],
    )
  }
}

/**
 * PostgreSQL text cannot hold NUL, which a path can carry (`%00` in a
 * verification id): written as `%00` again, the same for a look-up and a save.
 * Only ids no verification has collide so.
 */
function storable(text: string): string {
  return text.replaceAll('\u0000', '%00')
}
