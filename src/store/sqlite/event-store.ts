/**
 * The event outbox (otp/ports.ts EventOutbox): `add` runs inside the caller's
 * write transaction, so the event and its deliveries commit or roll back with
 * the change they report. The sequence number is read in that transaction,
 * under the write lock: exact even with several processes.
 */
import { eventBody } from '../../otp/events.ts'
import type { EventOutbox, NewEvent } from '../../otp/ports.ts'
import type { Verification } from '../../otp/types.ts'
import type { Db } from './db.ts'
import { VERIFICATION_COLUMNS, type VerificationRow } from './verification-store.ts'

const CURSOR = 'events_expired_through'

export class SqliteEventOutbox implements EventOutbox {
  private readonly accountQ
  private readonly sequenceQ
  private readonly insertQ
  private readonly fanOutQ
  private readonly expiredQ
  private readonly cursorQ
  private readonly setCursorQ

  constructor(db: Db) {
    const c = db.$client
    this.accountQ = c.prepare<{ name: string }, [number]>('SELECT name FROM accounts WHERE id = ?1')
    this.sequenceQ = c.prepare<{ n: number }, [string]>('SELECT coalesce(max(sequence), 0) AS n FROM events WHERE verification_id = ?1')
    this.insertQ = c.prepare<unknown, [string, number, string, string | null, number, number, string]>(
      'INSERT INTO events (id, account_id, type, verification_id, sequence, occurred_at, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)',
    )
    // One delivery per endpoint of the account subscribed to the type (`events` is `,t,t,` or null for all).
    this.fanOutQ = c.prepare<unknown, [number, number, number, string]>(
      `INSERT INTO event_deliveries (event_seq, endpoint_id, status, attempts, first_at, next_at, updated_at)
       SELECT ?1, id, 'pending', 0, ?2, ?2, ?2 FROM webhook_endpoints
       WHERE account_id = ?3 AND (events IS NULL OR instr(events, ',' || ?4 || ',') > 0)`,
    )
    this.expiredQ = c.prepare<VerificationRow, [number, number, number]>(
      `SELECT ${VERIFICATION_COLUMNS} FROM verifications v
       WHERE v.expires_at > ?1 AND v.expires_at <= ?2 AND v.used_at IS NULL AND v.status = 'active'
         AND NOT EXISTS (SELECT 1 FROM events e WHERE e.verification_id = v.id AND e.type IN ('verification.expired', 'verification.canceled'))
       ORDER BY v.expires_at LIMIT ?3`,
    )
    this.cursorQ = c.prepare<{ value: string }, [string]>('SELECT value FROM settings WHERE name = ?1')
    this.setCursorQ = c.prepare<unknown, [string, string]>('INSERT INTO settings (name, value) VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET value = excluded.value')
  }

  async add(e: NewEvent): Promise<void> {
    const id = crypto.randomUUID()
    const v = e.verification
    const sequence = v === null ? 0 : this.sequenceQ.get(v.id)!.n + 1
    const body = eventBody(e, id, this.accountName(e.accountId), sequence)
    const seq = Number(this.insertQ.run(id, e.accountId, e.type, v?.id ?? null, sequence, e.at, body).lastInsertRowid)
    this.fanOutQ.run(seq, e.at, e.accountId, e.type)
  }

  async expiredUnreported(from: number, to: number, limit: number): Promise<Verification[]> {
    return this.expiredQ.all(from, to, limit).map((r) => ({ ...r, charged: r.charged === 1 }))
  }

  async expiryCursor(): Promise<number | null> {
    const v = this.cursorQ.get(CURSOR)?.value
    return v === undefined ? null : Number(v)
  }

  async setExpiryCursor(at: number): Promise<void> {
    this.setCursorQ.run(CURSOR, String(at))
  }

  private accountName(id: number): string {
    const name = this.accountQ.get(id)?.name
    if (name === undefined) throw new Error(`an event for account ${id}, which does not exist`)
    return name
  }
}
