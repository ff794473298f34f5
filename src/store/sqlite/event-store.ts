/**
 * The event outbox (otp/ports/events.ts EventOutbox): `add` runs inside the
 * caller's write transaction, so an event commits or rolls back with the change
 * it reports; its sequence is read under the write lock. Three per-process
 * copies spare most events their reads (docs/benchmarks.md#where-a-requests-time-goes):
 * account names, whether an account has an endpoint, and recent verifications'
 * last sequence. All are dropped when another connection wrote or a rollback
 * happened (stale.ts), the endpoint one also when this connection writes an
 * endpoint: they give what the reads would.
 */
import { eventBody } from '../../otp/events.ts'
import type { EventOutbox, NewEvent } from '../../otp/ports/index.ts'
import type { Verification } from '../../otp/types.ts'
import { SQLITE } from '../sql/dialect.ts'
import { EXPIRY_CURSOR, eventSql, subscribed } from '../sql/events.ts'
import { toVerification } from '../sql/verifications.ts'
import type { Db } from './db.ts'
import { type Prepared, prepareShared } from './shared-sql.ts'
import type { StaleSource } from './stale.ts'

const SHARED = eventSql(SQLITE)
/** The hash purpose of event ids: their own family, apart from verification ids. */
export const EVENT_ID_PURPOSE = 'event-id'

/** Ids that name their row (lib/verification-id.ts): v4 UUIDs, found by number with no index of them. */
export interface RowIds {
  make(seq: number): string
  seqOf(id: string): number | null
}
/**
 * A verification's last sequence is taken from the copy only while that copy
 * is this recent (sweep.ts deletes events after at least a day, so the event
 * it counts is still there), and at most this many are kept.
 */
const SEQUENCE_COPY_MS = 3_600_000
const SEQUENCE_COPIES = 100_000

export class SqliteEventOutbox implements EventOutbox {
  private readonly accountQ
  private readonly sequenceQ
  private readonly insertQ
  private readonly fanOutQ
  private readonly recipientQ
  private readonly q: Record<keyof typeof SHARED, Prepared>
  private readonly hasEndpointQ
  private readonly lastSeqQ
  private lastSeq: number | undefined
  private readonly names = new Map<number, string>()
  private readonly withEndpoints = new Map<number, boolean>()
  private readonly sequences = new Map<string, { n: number; at: number }>()

  constructor(
    db: Db,
    stale: StaleSource,
    private readonly ids: RowIds,
  ) {
    const c = db.$client
    stale.onStale(() => {
      this.lastSeq = undefined
      this.names.clear()
      this.withEndpoints.clear()
      this.sequences.clear()
    })
    // SQLite's own statements: it numbers events under its single writer, names
    // each by its number, and keeps the verification's number beside its id
    // (PostgreSQL draws numbers from a sequence, store/pg/event-store.ts).
    this.lastSeqQ = c.prepare<{ seq: number | null }, []>('SELECT max(seq) AS seq FROM events')
    this.hasEndpointQ = c.prepare<{ one: number }, [number]>('SELECT 1 AS one FROM webhook_endpoints WHERE account_id = ?1 LIMIT 1')
    this.accountQ = c.prepare<{ name: string }, [number]>('SELECT name FROM accounts WHERE id = ?1')
    // By number and id: a number is given again once every verification up to it has been swept (sweep.ts), while events still pending stay.
    this.sequenceQ = c.prepare<{ n: number }, [number, string]>(
      'SELECT coalesce(max(sequence), 0) AS n FROM events WHERE verification_seq = ?1 AND verification_id = ?2',
    )
    this.insertQ = c.prepare<unknown, [number, string, number, string, string | null, number | null, number, number, string]>(
      'INSERT INTO events (seq, id, account_id, type, verification_id, verification_seq, sequence, occurred_at, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)',
    )
    this.recipientQ = c.prepare<unknown, [number, Uint8Array]>('UPDATE events SET recipient_hash = ?2 WHERE seq = ?1')
    // One delivery per endpoint of the account subscribed to the type.
    this.fanOutQ = c.prepare<unknown, [number, number, number, string]>(
      `INSERT INTO event_deliveries (event_seq, endpoint_id, status, attempts, first_at, next_at, updated_at)
       SELECT ?1, w.id, 'pending', 0, ?2, ?2, ?2 FROM webhook_endpoints w
       WHERE w.account_id = ?3 AND ${subscribed(SQLITE, 'w', '?4')}`,
    )
    this.q = prepareShared(c, SHARED)
  }

  async add(e: NewEvent): Promise<void> {
    // The row's number first: the id names it, and no index of random ids costs each insert a page (as verification ids).
    this.lastSeq ??= this.lastSeqQ.get()?.seq ?? 0
    const seq = ++this.lastSeq
    const id = this.ids.make(seq)
    const v = e.verification
    const sequence = v === null ? 0 : this.lastSequence(v, e.at) + 1
    const body = eventBody(e, id, this.accountName(e.accountId), sequence)
    this.insertQ.run(seq, id, e.accountId, e.type, v?.id ?? null, v?.seq ?? null, sequence, e.at, body)
    // A refusal only (rare): every other event leaves the column, and its partial index, alone.
    if (e.recipientHash !== undefined) this.recipientQ.run(seq, e.recipientHash)
    if (v !== null) this.keepSequence(v.id, sequence, e.at)
    if (this.hasEndpoints(e.accountId)) this.fanOutQ.run(seq, e.at, e.accountId, e.type)
  }

  /** Nothing to send ahead: the numbering is read in process (the single writer's copies above). */
  prepare(): void {}

  /** A verification this connection has just inserted (in the running transaction): it has no event yet. */
  inserted(verificationId: string, at: number): void {
    this.keepSequence(verificationId, 0, at)
  }

  /** This connection added, changed or deleted an endpoint. */
  endpointsChanged(): void {
    this.withEndpoints.clear()
  }

  private lastSequence(v: Verification, now: number): number {
    const copy = this.sequences.get(v.id)
    if (copy !== undefined && copy.at > now - SEQUENCE_COPY_MS) return copy.n
    return this.sequenceQ.get(v.seq, v.id)!.n
  }

  private keepSequence(verificationId: string, n: number, at: number): void {
    this.sequences.delete(verificationId)
    this.sequences.set(verificationId, { n, at })
    // The oldest first (a Map keeps insertion order).
    if (this.sequences.size > SEQUENCE_COPIES) this.sequences.delete(this.sequences.keys().next().value!)
  }

  private hasEndpoints(accountId: number): boolean {
    let has = this.withEndpoints.get(accountId)
    if (has === undefined) {
      has = this.hasEndpointQ.get(accountId) !== null
      this.withEndpoints.set(accountId, has)
    }
    return has
  }

  async expiredUnreported(from: number, to: number, limit: number): Promise<Verification[]> {
    return this.q.expiredUnreported.all(from, to, limit).map(toVerification)
  }

  async expiryCursor(): Promise<number | null> {
    const v = this.q.cursor.get(EXPIRY_CURSOR)?.value
    return v === undefined ? null : Number(v)
  }

  async setExpiryCursor(at: number): Promise<void> {
    this.q.setCursor.run(EXPIRY_CURSOR, String(at))
  }

  private accountName(id: number): string {
    let name = this.names.get(id)
    if (name === undefined) {
      name = this.accountQ.get(id)?.name
      if (name === undefined) throw new Error(`an event for account ${id}, which does not exist`)
      this.names.set(id, name)
    }
    return name
  }
}
