/**
 * The event outbox on PostgreSQL (otp/ports/events.ts EventOutbox, as
 * store/sqlite/event-store.ts): `add` runs inside the caller's write, so an
 * event commits or rolls back with the change it reports. Across nodes, the
 * next `sequence` is read after the verification's row lock (store/pg/locks.ts),
 * so it sees what the lock's previous holder committed; the unique index
 * (verification_id, sequence) is a second line. The expiry scan takes a lock of
 * its own before reading its cursor, so each expiry is reported once.
 */
import { eventBody } from '../../otp/events.ts'
import type { EventOutbox, NewEvent } from '../../otp/ports/index.ts'
import type { Verification } from '../../otp/types.ts'
import { POSTGRES } from '../sql/dialect.ts'
import { EXPIRY_CURSOR, eventSql, subscribed } from '../sql/events.ts'
import { num } from '../sql/values.ts'
import { toVerification } from '../sql/verifications.ts'
import type { Tx } from './client.ts'
import type { TxLocks } from './locks.ts'

const SHARED = eventSql(POSTGRES)
/** PostgreSQL's own: inside a write, the verifications found are locked (see expiredUnreported). */
const EXPIRED_LOCKED = `${SHARED.expiredUnreported} FOR UPDATE OF v`

/**
 * PostgreSQL's own statements, where SQLite reads a copy kept under its
 * single writer (store/sqlite/event-store.ts): the account's name and the
 * verification's last sequence in one round trip, and the event with its
 * deliveries in one statement (the event's number, from a sequence, is
 * `RETURNING`'s), sent pipelined.
 */
const NAME_AND_SEQUENCE = `SELECT (SELECT name FROM accounts WHERE id = $1) AS name,
  (SELECT coalesce(max(sequence), 0) FROM events WHERE verification_id = $2) AS n`
// One delivery per endpoint of the account subscribed to the event's type.
const INSERT_WITH_DELIVERIES = `WITH e AS (
    INSERT INTO events (id, account_id, type, verification_id, sequence, occurred_at, body) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING seq
  )
  INSERT INTO event_deliveries (event_seq, endpoint_id, status, attempts, first_at, next_at, updated_at)
  SELECT e.seq, w.id, 'pending', 0, $6, $6, $6 FROM e, webhook_endpoints w
  WHERE w.account_id = $2 AND ${subscribed(POSTGRES, 'w', '$3')}`

const SET_RECIPIENT = 'UPDATE events SET recipient_hash = $2 WHERE id = $1'

type Numbering = { name: string | null | undefined; n: number }

export class PgEventOutbox implements EventOutbox {
  /**
   * Per verification id, in this transaction: its account's name and last
   * `sequence`, read ahead by `prepare` or known from this transaction's own
   * last event about it. Exact while the transaction holds the
   * verification's row: every event about it is added under that lock.
   */
  private readonly numbering = new Map<string, Promise<Numbering>>()

  constructor(
    private readonly tx: Tx,
    private readonly locks: TxLocks,
  ) {}

  prepare(v: Pick<Verification, 'id' | 'seq' | 'accountId'>): void {
    if (!this.locks.locking || this.numbering.has(v.id)) return
    // Its row lock first (a no-op when the caller holds it, as it does), then the read: both sent now.
    void this.locks.verification(v.seq)
    const read = this.read(v.accountId, v.id)
    // Its failure reaches `add` through the promise (and the transaction's next statement fails too).
    read.catch(() => undefined)
    this.numbering.set(v.id, read)
  }

  async add(e: NewEvent): Promise<void> {
    const id = crypto.randomUUID()
    const v = e.verification
    if (v !== null) await this.locks.verification(v.seq)
    const known = v === null ? undefined : this.numbering.get(v.id)
    const { name, n } = await (known ?? this.read(e.accountId, v?.id ?? null))
    if (name === null || name === undefined) throw new Error(`an event for account ${e.accountId}, which does not exist`)
    const sequence = v === null ? 0 : n + 1
    if (v !== null && this.locks.locking) this.numbering.set(v.id, Promise.resolve({ name, n: sequence }))
    const body = eventBody(e, id, name, sequence)
    this.tx.exec(INSERT_WITH_DELIVERIES, [id, e.accountId, e.type, v?.id ?? null, sequence, e.at, body])
    // A refusal only (rare): every other event leaves the column, and its partial index, alone.
    if (e.recipientHash !== undefined) this.tx.exec(SET_RECIPIENT, [id, e.recipientHash])
  }

  private async read(accountId: number, verificationId: string | null): Promise<Numbering> {
    const rows = await this.tx.q<{ name: string | null; n: unknown }>(NAME_AND_SEQUENCE, [accountId, verificationId])
    return { name: rows[0]?.name, n: num(rows[0]?.n ?? 0) }
  }

  async expiredUnreported(from: number, to: number, limit: number): Promise<Verification[]> {
    const rows = await this.tx.q(this.locks.locking ? EXPIRED_LOCKED : SHARED.expiredUnreported, [from, to, limit])
    // Locked: a verify or cancel on another node that got there first is seen
    // (the row is checked again once its lock is free), and can no longer come between.
    const due = rows.map(toVerification)
    for (const v of due) this.locks.holdsVerification(v.seq)
    return due
  }

  /** Inside a write, the scan's lock comes first: the cursor and the events it reads are the last scan's, committed. */
  async expiryCursor(): Promise<number | null> {
    await this.locks.expiryScan()
    const rows = await this.tx.q<{ value: string }>(SHARED.cursor, [EXPIRY_CURSOR])
    return rows[0] === undefined ? null : Number(rows[0].value)
  }

  async setExpiryCursor(at: number): Promise<void> {
    await this.locks.expiryScan()
    this.tx.exec(SHARED.setCursor, [EXPIRY_CURSOR, String(at)])
  }
}
