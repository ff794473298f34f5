/**
 * Idempotency-Key records on PostgreSQL (otp/ports/idempotency.ts
 * IdempotencyStore): the shared statements of store/sql/idempotency.ts. Inside
 * a write, `find` first holds an advisory lock of the scope (store/pg/locks.ts),
 * so two first requests with one Idempotency-Key, on any nodes, run one after
 * the other and the second sees the first's record; the unique index is a
 * second line. `save` runs only after a `find` that found none in force, under
 * the same lock.
 */
import type { IdempotencyRecord, IdempotencyScope, IdempotencyStore, StoredAnswer } from '../../otp/ports/index.ts'
import { IDEMPOTENCY_SQL as SQL, toIdempotencyRecord } from '../sql/idempotency.ts'
import type { Tx } from './client.ts'
import type { TxLocks } from './locks.ts'

export class PgIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly tx: Tx,
    private readonly locks: TxLocks,
  ) {}

  async find(scope: IdempotencyScope, since: number): Promise<IdempotencyRecord | undefined> {
    await this.locks.named(scopeLock(scope))
    const rows = await this.tx.q(SQL.find, [scope.keyId, scope.method, storable(scope.path), storable(scope.key), since])
    return rows[0] === undefined ? undefined : toIdempotencyRecord(rows[0])
  }

  async save(scope: IdempotencyScope, record: IdempotencyRecord, verificationSeq: number | null): Promise<void> {
    await this.locks.named(scopeLock(scope))
    const { fingerprint, state, answer, createdAt } = record
    this.tx.exec(SQL.save, [
      scope.keyId,
      scope.method,
      storable(scope.path),
      storable(scope.key),
      fingerprint,
      state,
      answer.status,
      answer.body,
      verificationSeq,
      createdAt,
    ])
  }

  async settle(verificationSeq: number, answer: StoredAnswer | null): Promise<void> {
    this.tx.exec(SQL.settle, [verificationSeq, answer?.status ?? null, answer?.body ?? null])
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

/** The advisory lock of an Idempotency-Key's scope: requests with other keys never wait for it. */
function scopeLock(scope: IdempotencyScope): string {
  return `idempotency:${scope.keyId}:${scope.method}:${scope.path}:${scope.key}`
}
