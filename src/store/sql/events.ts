/**
 * The event outbox (otp/ports/events.ts EventOutbox): the statements both
 * engines run, and the subscription rule every delivery fan-out applies.
 *
 * How an event is numbered and written is each engine's own
 * (store/sqlite/event-store.ts, store/pg/event-store.ts): SQLite numbers
 * events under its single writer and names them by that number, PostgreSQL
 * draws numbers from a sequence and writes the event and its deliveries in
 * one statement.
 */
import type { Dialect } from './dialect.ts'
import { VERIFICATION_COLUMNS } from './verifications.ts'

/** The settings row of the expiry scan's cursor. */
export const EXPIRY_CURSOR = 'events_expired_through'

/**
 * Whether the endpoint `w` is subscribed to the event type `type` (an SQL
 * expression): its `events` is null (every type) or `,t1,t2,` holding it.
 */
export function subscribed(d: Dialect, w: string, type: string): string {
  return `(${w}.events IS NULL OR ${d.contains(`${w}.events`, `',' || ${type} || ','`)})`
}

export function eventSql(d: Dialect) {
  return {
    /**
     * Verifications that expired in ($1, $2], unused and still active (not
     * failed, not canceled), with no `verification.expired` or
     * `verification.canceled` event yet: oldest expiry first, at most $3.
     * A hook's delivery is left out: its identity server checks the code,
     * and an unused code there is no failure here (docs/integrations.md#what-otpd-records).
     */
    expiredUnreported: `SELECT ${VERIFICATION_COLUMNS} FROM verifications v
      WHERE v.expires_at > $1 AND v.expires_at <= $2 AND v.used_at IS NULL AND v.status = 'active' AND v.checked_by IS NULL
        AND NOT EXISTS (SELECT 1 FROM events e WHERE ${d.eventOf('e', 'v')} AND e.type IN ('verification.expired', 'verification.canceled'))
      ORDER BY v.expires_at, v.seq LIMIT $3`,
    cursor: 'SELECT value FROM settings WHERE name = $1',
    setCursor: 'INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
  } as const
}
