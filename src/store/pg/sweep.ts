/**
 * Retention sweep on PostgreSQL, the rules of store/sqlite/sweep.ts, in one
 * transaction (nodes sweeping at once delete the same rows once); `maxRows`
 * bounds each table's deletions per call (-1: none). An event goes with its
 * deliveries once none is pending, in one statement under the event's row lock,
 * which a replay takes too (store/pg/webhook-store.ts rearm): a replay never
 * re-arms a swept event.
 */
import type { SQL } from 'bun'
import type { SweepResult } from '../engine.ts'

export async function sweepPg(sql: SQL, now: number, retentionDays: number, maxRows = -1, idempotencyRetentionHours = 24): Promise<SweepResult> {
  const limit = maxRows < 0 ? 'ALL' : String(Math.trunc(maxRows))
  return (await sql.begin(async (tx) => {
    const del = async (text: string, before: number) => ((await tx.unsafe(text, [before])) as unknown as { count: number }).count
    return {
      verifications: await del(
        `DELETE FROM verifications WHERE seq IN (SELECT seq FROM verifications WHERE expires_at < $1 ORDER BY expires_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)`,
        now - retentionDays * 86_400_000,
      ),
      legacyIds: (
        (await tx.unsafe('DELETE FROM verification_legacy_ids WHERE seq < coalesce((SELECT min(seq) FROM verifications), 9223372036854775807)')) as unknown as {
          count: number
        }
      ).count,
      steps: (
        (await tx.unsafe(
          'DELETE FROM verification_steps WHERE verification_seq < coalesce((SELECT min(seq) FROM verifications), 9223372036854775807)',
        )) as unknown as { count: number }
      ).count,
      keyHits: await del(`DELETE FROM key_hits WHERE ctid IN (SELECT ctid FROM key_hits WHERE at < $1 ORDER BY at LIMIT ${limit})`, now - 60_000),
      recipientFailures: await del(
        `DELETE FROM recipient_failures WHERE id IN (SELECT id FROM recipient_failures WHERE at < $1 ORDER BY at LIMIT ${limit})`,
        now - 86_400_000,
      ),
      events: await sweepEvents(del, now - retentionDays * 86_400_000, limit),
      // A look-up already ignores a record this old (store/pg/idempotency-store.ts): deleting it changes no answer.
      idempotencyKeys: await del(
        `DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE created_at <= $1 ORDER BY created_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)`,
        now - idempotencyRetentionHours * 3_600_000,
      ),
      // The fraud guard's sends after 24 h, the longest window of its rules and of `otpd fraud status`; their minutes with them.
      fraudSends:
        (await del(
          `DELETE FROM fraud_sends WHERE seq IN (SELECT seq FROM fraud_sends WHERE at <= $1 ORDER BY at LIMIT ${limit} FOR UPDATE SKIP LOCKED)`,
          now - 86_400_000,
        )) +
        (await del(
          `DELETE FROM fraud_minutes WHERE ctid IN (SELECT ctid FROM fraud_minutes WHERE minute < $1 ORDER BY minute LIMIT ${limit} FOR UPDATE SKIP LOCKED)`,
          Math.floor((now - 86_400_000) / 60_000),
        )),
    }
  })) as SweepResult
}

/**
 * Old events with no delivery pending, and their deliveries (see the module
 * comment), among the `limit` oldest (events are numbered in time order): a
 * search of the whole table for old events would read all of it on every
 * sweep while none is old (events have no index by time).
 */
async function sweepEvents(del: (text: string, before: number) => Promise<number>, before: number, limit: string): Promise<number> {
  return del(
    `WITH gone AS (
       DELETE FROM events WHERE seq IN (
         SELECT e.seq FROM events e WHERE e.seq IN (SELECT seq FROM events ORDER BY seq LIMIT ${limit}) AND e.occurred_at < $1
           AND NOT EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_seq = e.seq AND d.status = 'pending')
         FOR UPDATE OF e SKIP LOCKED)
       RETURNING seq
     ), deliveries AS (DELETE FROM event_deliveries WHERE event_seq IN (SELECT seq FROM gone))
     SELECT seq FROM gone`,
    before,
  )
}
