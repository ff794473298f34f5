/** Rolling-window event logs: per-key request hits and per-recipient verify failures. */
import { and, asc, count, eq, gt, sql } from 'drizzle-orm'
import type { EventLog } from '../otp/ports.ts'
import type { Db } from './db.ts'
import { keyHits, recipientFailures } from './schema.ts'

const p = (name: string) => sql.placeholder(name)

export class KeyHitLog implements EventLog {
  private readonly countQ
  private readonly timeQ
  private readonly insertQ
  constructor(db: Db) {
    const where = and(eq(keyHits.keyId, p('keyId')), gt(keyHits.at, p('since')))
    this.countQ = db.select({ n: count() }).from(keyHits).where(where).prepare()
    this.timeQ = db.select({ at: keyHits.at }).from(keyHits).where(where).orderBy(asc(keyHits.at)).limit(1).offset(p('offset')).prepare()
    this.insertQ = db.insert(keyHits).values({ keyId: p('keyId'), at: p('at') }).prepare()
  }
  countSince(subject: string, since: number): number {
    return this.countQ.get({ keyId: Number(subject), since })?.n ?? 0
  }
  timeAt(subject: string, since: number, offset: number): number | undefined {
    return this.timeQ.get({ keyId: Number(subject), since, offset })?.at
  }
  record(subject: string, at: number): void {
    this.insertQ.run({ keyId: Number(subject), at })
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
