/**
 * The event outbox on PostgreSQL (otp/ports.ts EventOutbox, as
 * store/sqlite/event-store.ts): `add` runs inside the caller's write
 * transaction, so the event and its deliveries commit or roll back with the
 * change they report.
 *
 * Exact across nodes: SQLite reads the next `sequence` under its single
 * writer; here the transaction first holds the verification's row lock
 * (store/pg/locks.ts; the change being reported has mostly taken it
 * already), and the read of max(sequence) comes after it, in a statement of
 * its own, so it sees what the lock's previous holder committed. The unique
 * index (verification_id, sequence) is a second line. The expiry scan takes a
 * lock of its own before it reads its cursor: two nodes scanning at once
 * report each expiry once.
 */
import { eventBody } from '../../otp/events.ts'
import type { EventOutbox, NewEvent } from '../../otp/ports/index.ts'
import type { Verification } from '../../otp/types.ts'
import { num, type Tx } from './client.ts'
import type { TxLocks } from './locks.ts'
import { COLUMNS, toVerification } from './verification-store.ts'

const CURSOR = 'events_expired_through'

export class PgEventOutbox implements EventOutbox {
  constructor(
    private readonly tx: Tx,
    private readonly locks: TxLocks,
  ) {}

  async add(e: NewEvent): Promise<void> {
    const id = crypto.randomUUID()
    const v = e.verification
    if (v !== null) await this.locks.verification(v.seq)
    const rows = await this.tx.q<{ name: string | null; n: unknown }>(
      `SELECT (SELECT name FROM accounts WHERE id = $1) AS name,
         (SELECT coalesce(max(sequence), 0) FROM events WHERE verification_id = $2) AS n`,
      [e.accountId, v?.id ?? null],
    )
    const name = rows[0]?.name
    if (name === null || name === undefined) throw new Error(`an event for account ${e.accountId}, which does not exist`)
    const sequence = v === null ? 0 : num(rows[0]!.n) + 1
    const body = eventBody(e, id, name, sequence)
    // The event and one delivery per endpoint of the account subscribed to its type (`events` is `,t,t,` or null for all).
    this.tx.exec(
      `WITH e AS (
         INSERT INTO events (id, account_id, type, verification_id, sequence, occurred_at, body) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING seq
       )
       INSERT INTO event_deliveries (event_seq, endpoint_id, status, attempts, first_at, next_at, updated_at)
       SELECT e.seq, w.id, 'pending', 0, $6, $6, $6 FROM e, webhook_endpoints w
       WHERE w.account_id = $2 AND (w.events IS NULL OR strpos(w.events, ',' || $3 || ',') > 0)`,
      [id, e.accountId, e.type, v?.id ?? null, sequence, e.at, body],
    )
  }

  async expiredUnreported(from: number, to: number, limit: number): Promise<Verification[]> {
    const rows = await this.tx.q(
      `SELECT ${COLUMNS} FROM verifications v
       WHERE v.expires_at > $1 AND v.expires_at <= $2 AND v.used_at IS NULL AND v.status = 'active'
         AND NOT EXISTS (SELECT 1 FROM events e WHERE e.verification_id = v.id AND e.type IN ('verification.expired', 'verification.canceled'))
       ORDER BY v.expires_at, v.seq LIMIT $3${this.locks.locking ? ' FOR UPDATE OF v' : ''}`,
      [from, to, limit],
    )
    // Locked: a verify or cancel on another node that got there first is seen
    // (the row is checked again once its lock is free), and can no longer come between.
    const due = rows.map(toVerification)
    for (const v of due) this.locks.holdsVerification(v.seq)
    return due
  }

  /** Inside a write, the scan's lock comes first: the cursor and the events it reads are the last scan's, committed. */
  async expiryCursor(): Promise<number | null> {
    await this.locks.expiryScan()
    const rows = await this.tx.q<{ value: string }>('SELECT value FROM settings WHERE name = $1', [CURSOR])
    return rows[0] === undefined ? null : Number(rows[0].value)
  }

  async setExpiryCursor(at: number): Promise<void> {
    await this.locks.expiryScan()
    this.tx.exec('INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value', [CURSOR, String(at)])
  }
}
