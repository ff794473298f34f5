/**
 * Rolling-window event logs: per-key request hits and per-recipient verify
 * failures (see store/sqlite/event-logs.ts), exact across nodes. A
 * recipient's window is read and its failure recorded under the recipient's
 * lock (store/pg/locks.ts). A key's window is read without a lock, and its
 * hit recorded with COMMIT under the key's lock, after the window is read
 * again: one busy key's requests wait for one another's COMMIT only, not for
 * the whole of each other's transaction (docs/multi-node.md#one-busy-key).
 */
import type { FailureLog, KeyHitLog } from '../../otp/ports/index.ts'
import { KEY_SQL, toFailurePair } from '../sql/keys.ts'
import { numOrNull } from '../sql/values.ts'
import type { Tx } from './client.ts'
import type { TxLocks } from './locks.ts'

const NTH_HIT = 'SELECT at FROM key_hits WHERE key_id = $1 AND seq = (SELECT max(seq) FROM key_hits WHERE key_id = $1) - $2 + 1'

/**
 * Per-key hits numbered 1, 2, 3... by `seq`: the n-th most recent is the row
 * `max(seq) - n + 1`. PostgreSQL's own statements: max(seq) is read in the
 * statement itself (for a new hit, under the key's row lock), where SQLite
 * keeps a copy that only its single writer can keep exact.
 */
export class PgKeyHitLog implements KeyHitLog {
  constructor(private readonly tx: Tx) {}
  /** Without a lock: a full window stays full (hits only join it); room is checked again by `record`. */
  async nthLatest(keyId: number, n: number): Promise<number | undefined> {
    const rows = await this.tx.q<{ at: unknown }>(NTH_HIT, [keyId, n])
    return numOrNull(rows[0]?.at) ?? undefined
  }
  /**
   * At COMMIT: the key's lock, the window again, then the hit, in one
   * statement (`otpd_key_hit`, migration 0008) pipelined with COMMIT. A window
   * that filled meanwhile fails it with SQLSTATE `OT429`: PostgreSQL answers
   * the COMMIT with ROLLBACK, and the storage runs the write again
   * (client.ts isRetryable), which then decides on the window as it is.
   */
  async record(keyId: number, at: number, room?: { max: number; windowMs: number }): Promise<void> {
    await this.tx.atCommit(async () => {
      this.tx.exec('SELECT otpd_key_hit($1, $2, $3, $4)', [keyId, at, room?.max ?? null, room?.windowMs ?? null])
    })
  }
}

/** Subjects are recipient hashes (already keyed by account). */
export class PgRecipientFailureLog implements FailureLog {
  constructor(
    private readonly tx: Tx,
    private readonly locks: TxLocks,
  ) {}
  async nthLatest(hash: Uint8Array, n: number): Promise<number | undefined> {
    await this.locks.recipient(hash)
    const rows = await this.tx.q(KEY_SQL.nthFailure, [hash, n - 1])
    return numOrNull(rows[0]?.at) ?? undefined
  }
  async nthLatestPair(hash: Uint8Array, n: number): Promise<{ nth: number | undefined; previous: number | undefined }> {
    await this.locks.recipient(hash)
    if (n === 1) return { nth: await this.nthLatest(hash, 1), previous: undefined }
    return toFailurePair(await this.tx.q(KEY_SQL.nthFailurePair, [hash, n - 2]))
  }
  async record(hash: Uint8Array, at: number): Promise<void> {
    await this.locks.recipient(hash)
    this.tx.exec(KEY_SQL.recordFailure, [hash, at])
  }
}
