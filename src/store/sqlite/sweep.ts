/**
 * Retention sweep (DECISIONS.md section 8): verifications go `retention_days`
 * after they expire; window rows go once they are older than their window.
 *
 * Under load the window tables gain a row per request, so a minute's sweep
 * can have hundreds of thousands of rows to delete. `maxRows` bounds each
 * table's deletions per call (oldest first), so the server can sweep in short
 * transactions and answer requests in between (cli/serve.ts).
 */
import type { Db } from './db.ts'

export interface SweepResult {
  verifications: number
  legacyIds: number
  keyHits: number
  recipientFailures: number
  /** Fraud guard sends older than 24 h, the longest window of its rules and of `otpd fraud status`. */
  fraudSends: number
}

export function sweep(db: Db, now: number, retentionDays: number, maxRows = -1): SweepResult {
  const c = db.$client
  // LIMIT -1 is no limit. Window rows are appended in time order, so the oldest
  // come first in rowid order and the scan stops once `maxRows` are found.
  const del = (sql: string, before: number) => c.run(sql, [before, maxRows]).changes
  return c
    .transaction(() => ({
      verifications: del('DELETE FROM verifications WHERE seq IN (SELECT seq FROM verifications WHERE expires_at < ?1 LIMIT ?2)', now - retentionDays * 86_400_000),
      // Ids from before numbered rows (migration 0002), once no verification
      // that old is left (a look-up also checks the row still has the id).
      legacyIds: c.run('DELETE FROM verification_legacy_ids WHERE seq < coalesce((SELECT min(seq) FROM verifications), 9223372036854775807)').changes,
      keyHits: del('DELETE FROM key_hits WHERE rowid IN (SELECT rowid FROM key_hits WHERE at < ?1 ORDER BY rowid LIMIT ?2)', now - 60_000),
      recipientFailures: del(
        'DELETE FROM recipient_failures WHERE rowid IN (SELECT rowid FROM recipient_failures WHERE at < ?1 ORDER BY rowid LIMIT ?2)',
        now - 86_400_000,
      ),
      fraudSends:
        del('DELETE FROM fraud_sends WHERE seq IN (SELECT seq FROM fraud_sends WHERE at <= ?1 LIMIT ?2)', now - 86_400_000) +
        del('DELETE FROM fraud_minutes WHERE rowid IN (SELECT rowid FROM fraud_minutes WHERE minute < ?1 LIMIT ?2)', Math.floor((now - 86_400_000) / 60_000)),
    }))
    .immediate()
}

/** Whether a bounded sweep stopped at its bound somewhere (there may be more to delete). */
export function sweptToBound(r: SweepResult, maxRows: number): boolean {
  return r.verifications >= maxRows || r.keyHits >= maxRows || r.recipientFailures >= maxRows || r.fraudSends >= maxRows
}
