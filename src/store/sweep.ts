/**
 * Retention sweep (DECISIONS.md section 8): verifications go `retention_days`
 * after they expire; window rows go once they are older than their window.
 */
import { lt } from 'drizzle-orm'
import type { Db } from './db.ts'
import { keyHits, recipientFailures, verifications } from './schema.ts'

export interface SweepResult {
  verifications: number
  keyHits: number
  recipientFailures: number
}

export function sweep(db: Db, now: number, retentionDays: number): SweepResult {
  // drizzle's bun-sqlite run() returns bun:sqlite's Changes at run time; its type says void.
  const changes = (q: { run(): unknown }) => (q.run() as { changes: number }).changes
  return db.$client
    .transaction(() => ({
      verifications: changes(db.delete(verifications).where(lt(verifications.expiresAt, now - retentionDays * 86_400_000))),
      keyHits: changes(db.delete(keyHits).where(lt(keyHits.at, now - 60_000))),
      recipientFailures: changes(db.delete(recipientFailures).where(lt(recipientFailures.at, now - 86_400_000))),
    }))
    .immediate()
}
