/**
 * Rolling-window event logs: per-key request hits and per-recipient verify
 * failures. Prepared once per connection: they run on every request.
 */
import type { FailureLog, KeyHitLog } from '../../otp/ports/index.ts'
import { KEY_SQL, toFailurePair } from '../sql/keys.ts'
import { numOrNull } from '../sql/values.ts'
import type { Db } from './db.ts'
import { type Prepared, prepareShared } from './shared-sql.ts'
import type { StaleSource } from './stale.ts'

/**
 * Per-key hits numbered by `seq` (schema.ts): the n-th most recent hit is the row
 * `last - n + 1`, one index look-up whatever n is. Callers run inside an
 * IMMEDIATE transaction. `last` is kept per key and read again once the storage
 * says another connection wrote or a rollback undid a write (`onStale`): exact
 * only under SQLite's single writer (store/pg/event-logs.ts reads it under a lock).
 */
export class SqliteKeyHitLog implements KeyHitLog {
  private readonly lastQ
  private readonly bySeqQ
  private readonly insertQ
  private readonly lastSeq = new Map<number, number>()
  constructor(db: Db, tx: StaleSource) {
    const c = db.$client
    this.lastQ = c.prepare<{ seq: number }, [number]>('SELECT seq FROM key_hits WHERE key_id = ?1 ORDER BY seq DESC LIMIT 1')
    this.bySeqQ = c.prepare<{ at: number }, [number, number]>('SELECT at FROM key_hits WHERE key_id = ?1 AND seq = ?2')
    this.insertQ = c.prepare<unknown, [number, number, number]>('INSERT INTO key_hits (key_id, seq, at) VALUES (?1, ?2, ?3)')
    tx.onStale(() => this.lastSeq.clear())
  }
  async nthLatest(keyId: number, n: number): Promise<number | undefined> {
    const seq = this.last(keyId) - n + 1
    return seq < 1 ? undefined : this.bySeqQ.get(keyId, seq)?.at
  }
  async record(keyId: number, at: number): Promise<void> {
    const seq = this.last(keyId) + 1
    this.insertQ.run(keyId, seq, at)
    this.lastSeq.set(keyId, seq)
  }
  private last(keyId: number): number {
    let last = this.lastSeq.get(keyId)
    if (last === undefined) {
      last = this.lastQ.get(keyId)?.seq ?? 0
      this.lastSeq.set(keyId, last)
    }
    return last
  }
}

/**
 * Subjects are recipient hashes (already keyed by account). A count first
 * (the common answer: fewer than n), then the n-th most recent by offset; the
 * limit keeps a recipient's failures near n, as none is recorded once it is
 * reached. The count is SQLite's own: an ORDER BY costs SQLite a sorter
 * set-up even for no rows, so the shared look-up runs only when the count
 * says the answer exists.
 */
export class RecipientFailureLog implements FailureLog {
  private readonly countQ
  private readonly q: Record<'nthFailure' | 'nthFailurePair' | 'recordFailure', Prepared>
  constructor(db: Db) {
    const c = db.$client
    this.countQ = c.prepare<{ n: number }, [Uint8Array]>('SELECT count(*) AS n FROM recipient_failures WHERE recipient_hash = ?1')
    this.q = prepareShared(c, { nthFailure: KEY_SQL.nthFailure, nthFailurePair: KEY_SQL.nthFailurePair, recordFailure: KEY_SQL.recordFailure })
  }
  async nthLatest(hash: Uint8Array, n: number): Promise<number | undefined> {
    if (this.countQ.get(hash)!.n < n) return undefined
    return numOrNull(this.q.nthFailure.get(hash, n - 1)?.at) ?? undefined
  }
  async nthLatestPair(hash: Uint8Array, n: number): Promise<{ nth: number | undefined; previous: number | undefined }> {
    if (n === 1) return { nth: await this.nthLatest(hash, 1), previous: undefined }
    if (this.countQ.get(hash)!.n < n - 1) return { nth: undefined, previous: undefined }
    return toFailurePair(this.q.nthFailurePair.all(hash, n - 2))
  }
  async record(hash: Uint8Array, at: number): Promise<void> {
    this.q.recordFailure.run(hash, at)
  }
}
