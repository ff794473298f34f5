/** Verifications table (see otp/ports.ts VerificationStore). */
import { eq, sql } from 'drizzle-orm'
import type { VerificationStore } from '../otp/ports.ts'
import type { Verification } from '../otp/types.ts'
import type { Db } from './db.ts'
import { verifications } from './schema.ts'

const p = (name: string) => sql.placeholder(name)

type VerificationRow = Omit<Verification, 'charged'> & { charged: number }

export class SqliteVerificationStore implements VerificationStore {
  private readonly findQ
  private readonly sendTimesQ
  private readonly usedQ
  private readonly attemptsQ
  private readonly failedQ
  private readonly insertQ
  constructor(db: Db) {
    this.insertQ = db.$client.prepare<unknown, [Record<string, string | number | null>]>(
      `INSERT INTO verifications (id, key_id, account_id, channel, recipient_hash, recipient_mask, code_hash, test_mode, status,
         charged, created_at, expires_at, used_at, failed_attempts, locked_until)
       VALUES ($id, $keyId, $accountId, $channel, $recipientHash, $recipientMask, $codeHash, $testMode, $status,
         $charged, $createdAt, $expiresAt, $usedAt, $failedAttempts, $lockedUntil)`,
    )
    // bun:sqlite directly on the hottest read: no per-row mapping layer.
    this.findQ = db.$client.prepare<VerificationRow, [string, number]>(
      `SELECT id, key_id AS keyId, account_id AS accountId, channel, recipient_hash AS recipientHash, recipient_mask AS recipientMask,
         code_hash AS codeHash, test_mode AS testMode, status, charged, created_at AS createdAt, expires_at AS expiresAt,
         used_at AS usedAt, failed_attempts AS failedAttempts, locked_until AS lockedUntil
       FROM verifications WHERE id = ?1 AND key_id = ?2`,
    )
    this.sendTimesQ = db.$client.prepare<{ at: number }, [number, string, number]>(
      `SELECT created_at AS at FROM verifications
       WHERE account_id = ?1 AND recipient_hash = ?2 AND created_at > ?3 AND status = 'active' AND test_mode IS NULL`,
    )
    this.usedQ = db
      .update(verifications)
      .set({ usedAt: sql`${p('at')}`, failedAttempts: 0, lockedUntil: null })
      .where(eq(verifications.id, p('id')))
      .prepare()
    this.attemptsQ = db
      .update(verifications)
      .set({ failedAttempts: sql`${p('attempts')}`, lockedUntil: sql`${p('lockedUntil')}` })
      .where(eq(verifications.id, p('id')))
      .prepare()
    this.failedQ = db.update(verifications).set({ status: 'failed' }).where(eq(verifications.id, p('id'))).prepare()
  }
  insert(v: Verification): void {
    this.insertQ.run({ ...v, charged: v.charged ? 1 : 0 })
  }
  findForKey(id: string, keyId: number): Verification | undefined {
    const row = this.findQ.get(id, keyId)
    return row === null ? undefined : { ...row, charged: row.charged === 1 }
  }
  recipientSendTimes(accountId: number, recipientHash: string, since: number): number[] {
    // Sorted here: an ORDER BY costs SQLite a sorter (several times this look-up) even for no rows.
    return this.sendTimesQ
      .all(accountId, recipientHash, since)
      .map((r) => r.at)
      .sort((a, b) => a - b)
  }
  markUsed(id: string, at: number): void {
    this.usedQ.run({ id, at })
  }
  setAttempts(id: string, failedAttempts: number, lockedUntil: number | null): void {
    this.attemptsQ.run({ id, attempts: failedAttempts, lockedUntil })
  }
  markFailed(id: string): void {
    this.failedQ.run({ id })
  }
}
