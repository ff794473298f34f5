/**
 * Rolling-window event logs: per-key request hits and per-recipient verify
 * failures. Plain bun:sqlite prepared statements: they run on every request.
 */
import type { EventLog, KeyHitLog } from '../otp/ports.ts'
import type { Db } from './db.ts'

/**
 * Per-key hits numbered by `seq` (see schema.ts): the n-th most recent hit is
 * the row `max(seq) - n + 1`, two index look-ups whatever n is. Callers run
 * `record` inside an IMMEDIATE transaction, so `max(seq) + 1` is unique.
 */
export class SqliteKeyHitLog implements KeyHitLog {
  private readonly nthQ
  private readonly insertQ
  constructor(db: Db) {
    this.nthQ = db.$client.prepare<{ at: number }, [number, number]>(
      'SELECT at FROM key_hits WHERE key_id = ?1 AND seq = (SELECT max(seq) FROM key_hits WHERE key_id = ?1) - ?2 + 1',
    )
    this.insertQ = db.$client.prepare<unknown, [number, number]>(
      'INSERT INTO key_hits (key_id, seq, at) VALUES (?1, coalesce((SELECT max(seq) FROM key_hits WHERE key_id = ?1), 0) + 1, ?2)',
    )
  }
  nthLatest(keyId: number, n: number): number | undefined {
    return this.nthQ.get(keyId, n)?.at
  }
  record(keyId: number, at: number): void {
    this.insertQ.run(keyId, at)
  }
}

/**
 * Subjects are recipient hashes (already keyed by account). The n-th most
 * recent failure is read by offset, at most n index steps; the limit keeps
 * a recipient's failures near n (no failure is recorded once it is reached).
 */
export class RecipientFailureLog implements EventLog {
  private readonly nthQ
  private readonly insertQ
  constructor(db: Db) {
    this.nthQ = db.$client.prepare<{ at: number }, [string, number]>(
      'SELECT at FROM recipient_failures WHERE recipient_hash = ?1 ORDER BY at DESC LIMIT 1 OFFSET ?2 - 1',
    )
    this.insertQ = db.$client.prepare<unknown, [string, number]>('INSERT INTO recipient_failures (recipient_hash, at) VALUES (?1, ?2)')
  }
  nthLatest(hash: string, n: number): number | undefined {
    return this.nthQ.get(hash, n)?.at
  }
  record(hash: string, at: number): void {
    this.insertQ.run(hash, at)
  }
}
