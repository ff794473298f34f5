/**
 * Webhook endpoints, the event log and the delivery queue
 * (otp/ports/webhooks.ts WebhookRepo): the shared statements of
 * store/sql/webhooks.ts, prepared once per connection.
 */
import type { DeliveryResult, DueDelivery, EndpointRow, EventDeliveryStatus, EventRow, EventType, WebhookRepo } from '../../otp/ports/index.ts'
import { forSqlite, SQLITE } from '../sql/dialect.ts'
import { num, type Row } from '../sql/values.ts'
import { type Candidate, pickFair } from '../sql/fair-turns.ts'
import {
  CLAIMED_COLUMNS,
  DUE,
  EVENT_ROWS,
  endpointRoom,
  hasDueSql,
  NO_ENDPOINT_LIMIT,
  storedEventTypes,
  toDueDelivery,
  toEndpoint,
  toEventRow,
  webhookSql,
} from '../sql/webhooks.ts'
import type { Db } from './db.ts'
import type { RowIds } from './event-store.ts'
import { type Prepared, prepareShared } from './shared-sql.ts'

const SHARED = webhookSql(SQLITE)

/**
 * The claim's reads, along the partial indexes named: without statistics
 * SQLite could read and sort every pending delivery on each claim
 * (docs/benchmarks.md#where-a-requests-time-goes). An endpoint's leases are
 * counted along its leases alone, and its due deliveries read in `next_at`
 * order along its pending ones, so a backlog of one endpoint costs another's
 * claim nothing.
 */
const HINTS = { leased: 'INDEXED BY event_deliveries_leased', due: 'INDEXED BY event_deliveries_endpoint_due' }
export const SQLITE_ROOM = endpointRoom(HINTS.leased)
/** An endpoint's due deliveries with all a claim returns, so that leasing one is a write by rowid and no second read. */
export const SQLITE_ENDPOINT_DUE = `SELECT d.rowid AS rid, d.next_at, ${CLAIMED_COLUMNS} FROM event_deliveries d ${HINTS.due}
  JOIN events e ON e.seq = d.event_seq JOIN webhook_endpoints w ON w.id = d.endpoint_id
  WHERE d.endpoint_id = $2 AND ${DUE} ORDER BY d.next_at LIMIT $3`
export const SQLITE_HAS_DUE = hasDueSql(HINTS)

export class SqliteWebhookRepo implements WebhookRepo {
  private readonly q: Record<keyof typeof SHARED, Prepared>
  private readonly findEventQ
  private readonly findLegacyEventQ
  private readonly roomQ
  private readonly endpointDueQ
  private readonly hasDueQ
  private readonly leaseQ

  /** `endpointsChanged`: the event outbox's copy of which accounts have endpoints is dropped on each write of one. */
  constructor(
    db: Db,
    private readonly eventIds: RowIds,
    private readonly endpointsChanged: () => void = () => {},
  ) {
    const c = db.$client
    this.q = prepareShared(c, SHARED)
    // SQLite's own: an event id names its row (store/sqlite/event-store.ts), and
    // an event from before such ids is found by the number kept for it (migration 0009).
    this.findEventQ = c.prepare<Row, [number, string]>(`${EVENT_ROWS} WHERE e.seq = ?1 AND e.id = ?2) x`)
    this.findLegacyEventQ = c.prepare<Row, [string]>(`${EVENT_ROWS} WHERE e.seq = (SELECT l.seq FROM event_legacy_ids l WHERE l.id = ?1) AND e.id = ?1) x`)
    // SQLite's own claim: under its single writer, the due deliveries read and
    // then leased one by one cannot be taken by another claim in between
    // (PostgreSQL locks them, store/pg/webhook-store.ts).
    this.roomQ = c.prepare<Row, [number, number]>(forSqlite(SQLITE_ROOM))
    this.endpointDueQ = c.prepare<Row, [number, number, number]>(forSqlite(SQLITE_ENDPOINT_DUE))
    this.hasDueQ = c.prepare<Row, [number, number]>(forSqlite(SQLITE_HAS_DUE))
    this.leaseQ = c.prepare<unknown, [number, number, string]>('UPDATE event_deliveries SET lease_until = ?2, lease_owner = ?3 WHERE rowid = ?1')
  }

  async insertEndpoint(e: { accountId: number; url: string; events: EventType[] | null; secret: Uint8Array; at: number }): Promise<number> {
    const row = this.q.insertEndpoint.get(e.accountId, e.url, storedEventTypes(e.events), e.secret, e.at)
    this.endpointsChanged()
    return num(row!.id)
  }

  async listEndpoints(accountId?: number): Promise<EndpointRow[]> {
    const rows = accountId === undefined ? this.q.listEndpoints.all() : this.q.listAccountEndpoints.all(accountId)
    return rows.map(toEndpoint)
  }

  async findEndpoint(id: number): Promise<EndpointRow | undefined> {
    const row = this.q.findEndpoint.get(id)
    return row === null ? undefined : toEndpoint(row)
  }

  async deleteEndpoint(id: number): Promise<void> {
    this.endpointsChanged()
    this.q.deleteEndpointDeliveries.run(id)
    this.q.deleteEndpoint.run(id)
  }

  async setSecret(id: number, secret: Uint8Array, prevSecret: Uint8Array, at: number): Promise<void> {
    this.q.setSecret.run(id, secret, prevSecret, at)
  }

  async listEvents(q: { accountId?: number; status?: EventDeliveryStatus; type?: EventType; limit: number }): Promise<EventRow[]> {
    // The newest `limit`, shown oldest first.
    return this.q.listEvents
      .all(q.accountId ?? null, q.status ?? null, q.limit, q.type ?? null)
      .reverse()
      .map(toEventRow)
  }

  async findEvent(id: string): Promise<EventRow | undefined> {
    const seq = this.eventIds.seqOf(id)
    const row = (seq === null ? null : this.findEventQ.get(seq, id)) ?? this.findLegacyEventQ.get(id)
    return row === null ? undefined : toEventRow(row)
  }

  async rearm(eventSeq: number, at: number, onlyFailed: boolean): Promise<number> {
    const n = (onlyFailed ? this.q.rearmFailed : this.q.rearmAll).run(eventSeq, at).changes
    this.q.unpauseRearmed.run(eventSeq)
    return n
  }

  async failedEvents(limit: number): Promise<number[]> {
    return this.q.failedEvents.all(limit).map((r) => num(r.event_seq))
  }

  async hasDue(now: number, perEndpoint = NO_ENDPOINT_LIMIT): Promise<boolean> {
    return this.hasDueQ.get(now, perEndpoint) !== null
  }

  async claim(now: number, leaseUntil: number, owner: string, limit: number, perEndpoint = limit): Promise<DueDelivery[]> {
    const candidates: (Candidate & { row: Row })[] = []
    for (const r of this.roomQ.all(now, perEndpoint)) {
      const n = Math.min(num(r.room), limit)
      if (n <= 0) continue
      const accountId = num(r.account_id)
      for (const d of this.endpointDueQ.all(now, num(r.id), n))
        candidates.push({ eventSeq: num(d.event_seq), endpointId: num(d.endpoint_id), accountId, nextAt: num(d.next_at), row: d })
    }
    return pickFair(candidates, limit).map((c) => {
      this.leaseQ.run(num(c.row.rid), leaseUntil, owner)
      return toDueDelivery(c.row)
    })
  }

  async finish(r: DeliveryResult): Promise<boolean> {
    if (this.q.finish.run(r.eventSeq, r.endpointId, r.owner, r.status, r.attempts, r.nextAt, r.error, r.at).changes !== 1) return false
    this.q.endpointTried.run(r.endpointId, r.status, r.startedAt ?? r.at, r.at)
    return true
  }

  async outboxDepth(): Promise<number> {
    return num(this.q.outboxDepth.get()!.n)
  }

  async queuedUpTo(limit: number): Promise<number> {
    return num(this.q.queuedUpTo.get(limit)!.n)
  }

  async failingEndpoints(): Promise<number> {
    return num(this.q.failingEndpoints.get()!.n)
  }
}
