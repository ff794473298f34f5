/**
 * Retention sweep (docs/api.md#retention): verifications go `retention_days`
 * after they expire; window rows go once they are older than their window;
 * Idempotency-Key records `idempotency.retention_hours` after their first
 * request (docs/api.md#idempotency-keys).
 *
 * Under load the window tables gain a row per request, so a minute's sweep
 * can have hundreds of thousands of rows to delete. `maxRows` bounds each
 * table's deletions per call (oldest first), so the server can sweep in short
 * transactions and answer requests in between (cli/serve.ts).
 */
import type { SweepResult } from '../engine.ts'
import type { Db } from './db.ts'

export function sweep(db: Db, now: number, retentionDays: number, maxRows = -1, idempotencyRetentionHours = 24): SweepResult {
  const c = db.$client
  // LIMIT -1 is no limit. Window rows are appended in time order, so the oldest
  // come first in rowid order: a step looks at the `maxRows` oldest only (its
  // head) and deletes those past their window. A scan for old rows would read
  // the whole table whenever fewer than `maxRows` are old, under the write
  // lock, every minute.
  const del = (sql: string, before: number) => c.run(sql, [before, maxRows]).changes
  const head = (table: string, time: string, before: number) =>
    del(`DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM (SELECT rowid, ${time} AS t FROM ${table} ORDER BY rowid LIMIT ?2) WHERE t < ?1)`, before)
  return c
    .transaction(() => ({
      verifications: del(
        'DELETE FROM verifications WHERE seq IN (SELECT seq FROM verifications WHERE expires_at < ?1 LIMIT ?2)',
        now - retentionDays * 86_400_000,
      ),
      // Ids from before numbered rows (migration 0002), once no verification
      // that old is left (a look-up also checks the row still has the id).
      legacyIds: c.run('DELETE FROM verification_legacy_ids WHERE seq < coalesce((SELECT min(seq) FROM verifications), 9223372036854775807)').changes,
      // A workflow's steps (docs/api.md#workflows), once no verification that old is left.
      steps: c.run('DELETE FROM verification_steps WHERE verification_seq < coalesce((SELECT min(seq) FROM verifications), 9223372036854775807)').changes,
      keyHits: head('key_hits', 'at', now - 60_000),
      recipientFailures: head('recipient_failures', 'at', now - 86_400_000),
      events: sweepEvents(c, now - retentionDays * 86_400_000, maxRows),
      // A look-up already ignores a record this old (store/sqlite/idempotency-store.ts): deleting it changes no answer.
      idempotencyKeys: c.run('DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE created_at <= ?1 LIMIT ?2)', [
        now - idempotencyRetentionHours * 3_600_000,
        maxRows,
      ]).changes,
      fraudSends:
        del('DELETE FROM fraud_sends WHERE seq IN (SELECT seq FROM fraud_sends WHERE at <= ?1 LIMIT ?2)', now - 86_400_000) +
        del('DELETE FROM fraud_minutes WHERE rowid IN (SELECT rowid FROM fraud_minutes WHERE minute < ?1 LIMIT ?2)', Math.floor((now - 86_400_000) / 60_000)),
    }))
    .immediate()
}

/**
 * Events go with the same retention as verifications, once none of their
 * deliveries is still pending (a replay makes one pending again), together
 * with their deliveries and their legacy id (event_legacy_ids, SQLite only).
 * Events are numbered in time order, so the oldest come first: a step looks
 * at the `maxRows` oldest (as the window tables above). An old event kept
 * by a pending delivery (a replay) holds its place in that head until the
 * delivery ends (24 h at most).
 */
function sweepEvents(c: Db['$client'], before: number, maxRows: number): number {
  const doomed = c
    .query<{ seq: number; id: string }, [number, number]>(
      `SELECT seq, id FROM (SELECT seq, id, occurred_at FROM events ORDER BY seq LIMIT ?2) e WHERE occurred_at < ?1
         AND NOT EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_seq = e.seq AND d.status = 'pending')
       ORDER BY seq`,
    )
    .all(before, maxRows)
  const dropDeliveries = c.prepare<unknown, [number]>('DELETE FROM event_deliveries WHERE event_seq = ?1')
  // A legacy event kept its id in events.id (migration 0009): deleted by that key, which is indexed.
  const dropLegacyId = c.prepare<unknown, [string]>('DELETE FROM event_legacy_ids WHERE id = ?1')
  const dropEvent = c.prepare<unknown, [number]>('DELETE FROM events WHERE seq = ?1')
  for (const { seq, id } of doomed) {
    dropDeliveries.run(seq)
    dropLegacyId.run(id)
    dropEvent.run(seq)
  }
  // Legacy ids of events swept before they went together, once no event that
  // old is left (as for verification_legacy_ids). The table only shrinks:
  // migration 0009 filled it once, with the events then within retention.
  c.run('DELETE FROM event_legacy_ids WHERE seq < coalesce((SELECT min(seq) FROM events), 9223372036854775807)')
  return doomed.length
}
