/**
 * Retention sweep on PostgreSQL (see store/sqlite/sweep.ts for the rules):
 * verifications go `retention_days` after they expire, window rows once
 * older than their window; `maxRows` bounds each table's deletions per call
 * (-1: no bound). One transaction; several nodes may sweep at once, which
 * only deletes the same old rows once.
 */
import type { SQL } from 'bun'
import type { SweepResult } from '../sqlite/sweep.ts'

export async function sweepPg(sql: SQL, now: number, retentionDays: number, maxRows = -1): Promise<SweepResult> {
  const limit = maxRows < 0 ? 'ALL' : String(Math.trunc(maxRows))
  return (await sql.begin(async (tx) => {
    const del = async (text: string, before: number) => ((await tx.unsafe(text, [before])) as unknown as { count: number }).count
    return {
      verifications: await del(
        `DELETE FROM verifications WHERE seq IN (SELECT seq FROM verifications WHERE expires_at < $1 ORDER BY expires_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)`,
        now - retentionDays * 86_400_000,
      ),
      legacyIds: ((await tx.unsafe('DELETE FROM verification_legacy_ids WHERE seq < coalesce((SELECT min(seq) FROM verifications), 9223372036854775807)')) as unknown as { count: number }).count,
      keyHits: await del(`DELETE FROM key_hits WHERE ctid IN (SELECT ctid FROM key_hits WHERE at < $1 ORDER BY at LIMIT ${limit})`, now - 60_000),
      recipientFailures: await del(
        `DELETE FROM recipient_failures WHERE id IN (SELECT id FROM recipient_failures WHERE at < $1 ORDER BY at LIMIT ${limit})`,
        now - 86_400_000,
      ),
    }
  })) as SweepResult
}
