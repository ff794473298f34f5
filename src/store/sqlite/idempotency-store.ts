/**
 * Idempotency-Key records (otp/ports/idempotency.ts IdempotencyStore): the
 * shared statements of store/sql/idempotency.ts. Called inside the
 * operation's IMMEDIATE transaction, so a look-up and the insert that follows
 * it cannot interleave with another connection's: the unique index is a
 * second line, never the decider.
 */
import type { IdempotencyRecord, IdempotencyScope, IdempotencyStore, StoredAnswer } from '../../otp/ports/index.ts'
import { IDEMPOTENCY_SQL, toIdempotencyRecord } from '../sql/idempotency.ts'
import type { Db } from './db.ts'
import { type Prepared, prepareShared } from './shared-sql.ts'

export class SqliteIdempotencyStore implements IdempotencyStore {
  private readonly q: Record<keyof typeof IDEMPOTENCY_SQL, Prepared>

  constructor(db: Db) {
    this.q = prepareShared(db.$client, IDEMPOTENCY_SQL)
  }

  async find(scope: IdempotencyScope, since: number): Promise<IdempotencyRecord | undefined> {
    const row = this.q.find.get(scope.keyId, scope.method, scope.path, scope.key, since)
    return row === null ? undefined : toIdempotencyRecord(row)
  }

  async save(scope: IdempotencyScope, record: IdempotencyRecord, verificationSeq: number | null): Promise<void> {
    const { fingerprint, state, answer, createdAt } = record
    this.q.save.run(scope.keyId, scope.method, scope.path, scope.key, fingerprint, state, answer.status, answer.body, verificationSeq, createdAt)
  }

  async settle(verificationSeq: number, answer: StoredAnswer | null): Promise<void> {
    this.q.settle.run(verificationSeq, answer?.status ?? null, answer?.body ?? null)
  }
}
