/**
 * Rolling-window event logs: per-key request hits and per-recipient verify
 * failures (see store/sqlite/event-logs.ts). Inside a write, each first takes
 * its subject's lock (store/pg/locks.ts), so the window read and the hit
 * recorded after it are exact across nodes.
 */
import type { EventLog, KeyHitLog } from '../../otp/ports/index.ts'
import { KEY_SQL } from '../sql/keys.ts'
import { numOrNull } from '../sql/values.ts'
import type { Tx } from './client.ts'
import type { TxLocks } from './locks.ts'

/**
 * Per-key hits numbered 1, 2, 3... by `seq`: the n-th most recent is the row
 * `max(seq) - n + 1`. PostgreSQL's own statements: max(seq) is read under
 * the key's row lock, in the statement itself, where SQLite keeps a copy
 * that only its single writer can keep exact.
 */
export class PgKeyHitLog implements KeyHitLog {
  constructor(
    private readonly tx: Tx,
    private readonly locks: TxLocks,
  ) {}
  async nthLatest(keyId: number, n: number): Promise<number | undefined> {
    await this.locks.key(keyId)
    const rows = await this.tx.q<{ at: unknown }>(
      'SELECT at FROM key_hits WHERE key_id = $1 AND seq = (SELECT max(seq) FROM key_hits WHERE key_id = $1) - $2 + 1',
      [keyId, n],
    )
    return numOrNull(rows[0]?.at) ?? undefined
  }
  async record(keyId: number, at: number): Promise<void> {
    await this.locks.key(keyId)
    this.tx.exec('INSERT INTO key_hits (key_id, seq, at) SELECT $1, coalesce(max(seq), 0) + 1, $2 FROM key_hits WHERE key_id = $1', [keyId, at])
  }
}

/** Subjects are recipient hashes (already keyed by account). */
export class PgRecipientFailureLog implements EventLog<Uint8Array> {
  constructor(
    private readonly tx: Tx,
    private readonly locks: TxLocks,
  ) {}
  async nthLatest(hash: Uint8Array, n: number): Promise<number | undefined> {
    await this.locks.recipient(hash)
    const rows = await this.tx.q(KEY_SQL.nthFailure, [hash, n - 1])
    return numOrNull(rows[0]?.at) ?? undefined
  }
  async record(hash: Uint8Array, at: number): Promise<void> {
    await this.locks.recipient(hash)
    this.tx.exec(KEY_SQL.recordFailure, [hash, at])
  }
}
