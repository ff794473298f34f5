/** Rolling-window event logs: per-key request hits and per-recipient verify failures. */
import { and, asc, count, eq, gt, sql } from 'drizzle-orm'
import type { EventLog, KeyHitLog } from '../otp/ports.ts'
import type { Db } from './db.ts'
import { recipientFailures } from './schema.ts'

const p = (name: string) => sql.placeholder(name)

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
      'INSERT INTO key_hits (key_id, seq, at) SELECT ?1, coalesce(max(seq), 0) + 1, ?2 FROM key_hits WHERE key_id = ?1',
    )
  }
  nthLatest(keyId: number, n: number): number | undefined {
    return this.nthQ.get(keyId, n)?.at
  }
  record(keyId: number, at: number): void {
    this.insertQ.run(keyId, at)
  }
}

/** Subjects are recipient hashes (already keyed by account). */
export class RecipientFailureLog implements EventLog {
  private readonly countQ
  private readonly timeQ
  private readonly insertQ
  constructor(db: Db) {
    const where = and(eq(recipientFailures.recipientHash, p('hash')), gt(recipientFailures.at, p('since')))
    this.countQ = db.select({ n: count() }).from(recipientFailures).where(where).prepare()
    this.timeQ = db
      .select({ at: recipientFailures.at })
      .from(recipientFailures)
      .where(where)
      .orderBy(asc(recipientFailures.at))
      .limit(1)
      .offset(p('offset'))
      .prepare()
    this.insertQ = db.insert(recipientFailures).values({ recipientHash: p('hash'), at: p('at') }).prepare()
  }
  countSince(hash: string, since: number): number {
    return this.countQ.get({ hash, since })?.n ?? 0
  }
  timeAt(hash: string, since: number, offset: number): number | undefined {
    return this.timeQ.get({ hash, since, offset })?.at
  }
  record(hash: string, at: number): void {
    this.insertQ.run({ hash, at })
  }
}
