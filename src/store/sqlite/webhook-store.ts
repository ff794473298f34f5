/**
 * Webhook endpoints, the event log and the delivery queue (otp/webhooks.ts
 * WebhookRepo). An event's status is derived from its deliveries: any
 * failed, else any pending, else delivered; `none` when it went nowhere.
 */
import type { DeliveryResult, DueDelivery, EndpointRow, EventDeliveryStatus, EventRow, EventType, WebhookRepo } from '../../otp/ports/index.ts'
import type { Db } from './db.ts'
import type { RowIds } from './event-store.ts'

type RawEndpoint = Omit<EndpointRow, 'events'> & { events: string | null }

const ENDPOINT = `w.id, w.account_id AS accountId, a.name AS account, w.url, w.events, w.secret, w.prev_secret AS prevSecret,
  w.rotated_at AS rotatedAt, w.created_at AS createdAt FROM webhook_endpoints w JOIN accounts a ON a.id = w.account_id`

const EVENT_STATUS = `CASE
    WHEN EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_seq = e.seq AND d.status = 'failed') THEN 'failed'
    WHEN EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_seq = e.seq AND d.status = 'pending') THEN 'pending'
    WHEN EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_seq = e.seq) THEN 'delivered'
    ELSE 'none' END`

const EVENT = `SELECT * FROM (SELECT e.seq, e.id, a.name AS account, e.type, e.verification_id AS verificationId, e.sequence,
  e.occurred_at AS occurredAt, e.account_id AS accountId, ${EVENT_STATUS} AS status,
  (SELECT count(*) FROM event_deliveries d WHERE d.event_seq = e.seq) AS endpoints,
  (SELECT coalesce(sum(d.attempts), 0) FROM event_deliveries d WHERE d.event_seq = e.seq) AS attempts,
  (SELECT d.last_error FROM event_deliveries d WHERE d.event_seq = e.seq AND d.last_error IS NOT NULL ORDER BY d.updated_at DESC LIMIT 1) AS lastError
  FROM events e JOIN accounts a ON a.id = e.account_id`

export class SqliteWebhookRepo implements WebhookRepo {
  private readonly c

  /** `endpointsChanged`: the event outbox's copy of which accounts have endpoints is dropped on each write of one. */
  constructor(
    db: Db,
    private readonly eventIds: RowIds,
    private readonly endpointsChanged: () => void = () => {},
  ) {
    this.c = db.$client
  }

  async insertEndpoint(e: { accountId: number; url: string; events: EventType[] | null; secret: Uint8Array; at: number }): Promise<number> {
    const r = this.c.run('INSERT INTO webhook_endpoints (account_id, url, events, secret, created_at) VALUES (?1, ?2, ?3, ?4, ?5)', [
      e.accountId,
      e.url,
      e.events === null ? null : `,${e.events.join(',')},`,
      e.secret,
      e.at,
    ])
    this.endpointsChanged()
    return Number(r.lastInsertRowid)
  }

  async listEndpoints(accountId?: number): Promise<EndpointRow[]> {
    const rows =
      accountId === undefined
        ? this.c.query<RawEndpoint, []>(`SELECT ${ENDPOINT} ORDER BY w.id`).all()
        : this.c.query<RawEndpoint, [number]>(`SELECT ${ENDPOINT} WHERE w.account_id = ?1 ORDER BY w.id`).all(accountId)
    return rows.map(endpoint)
  }

  async findEndpoint(id: number): Promise<EndpointRow | undefined> {
    const row = this.c.query<RawEndpoint, [number]>(`SELECT ${ENDPOINT} WHERE w.id = ?1`).get(id)
    return row === null ? undefined : endpoint(row)
  }

  async deleteEndpoint(id: number): Promise<void> {
    this.endpointsChanged()
    this.c.run('DELETE FROM event_deliveries WHERE endpoint_id = ?1', [id])
    this.c.run('DELETE FROM webhook_endpoints WHERE id = ?1', [id])
  }

  async setSecret(id: number, secret: Uint8Array, prevSecret: Uint8Array, at: number): Promise<void> {
    this.c.run('UPDATE webhook_endpoints SET secret = ?2, prev_secret = ?3, rotated_at = ?4 WHERE id = ?1', [id, secret, prevSecret, at])
  }

  async listEvents(q: { accountId?: number; status?: EventDeliveryStatus; limit: number }): Promise<EventRow[]> {
    // The newest `limit`, shown oldest first.
    return this.c
      .query<EventRow, [number | null, string | null, number]>(
        `${EVENT} WHERE (?2 IS NULL OR ?2 = 'delivered' OR e.seq IN (SELECT event_seq FROM event_deliveries WHERE status = ?2)))
         WHERE (?1 IS NULL OR accountId = ?1) AND (?2 IS NULL OR status = ?2) ORDER BY seq DESC LIMIT ?3`,
      )
      .all(q.accountId ?? null, q.status ?? null, q.limit)
      .reverse()
      .map(eventRow)
  }

  /** By the row its id names, or for an event from before such ids, by the number kept for it (migration 0009). */
  async findEvent(id: string): Promise<EventRow | undefined> {
    const seq = this.eventIds.seqOf(id)
    const row =
      (seq === null ? null : this.c.query<EventRow, [number, string]>(`${EVENT} WHERE e.seq = ?1 AND e.id = ?2)`).get(seq, id)) ??
      this.c.query<EventRow, [string]>(`${EVENT} WHERE e.seq = (SELECT l.seq FROM event_legacy_ids l WHERE l.id = ?1) AND e.id = ?1)`).get(id)
    return row === null ? undefined : eventRow(row)
  }

  async rearm(eventSeq: number, at: number, onlyFailed: boolean): Promise<number> {
    if (onlyFailed) {
      return this.c.run(
        `UPDATE event_deliveries SET status = 'pending', attempts = 0, first_at = ?2, next_at = ?2, lease_until = NULL, lease_owner = NULL,
           last_error = NULL, updated_at = ?2 WHERE event_seq = ?1 AND status = 'failed'`,
        [eventSeq, at],
      ).changes
    }
    return this.c.run(
      `INSERT INTO event_deliveries (event_seq, endpoint_id, status, attempts, first_at, next_at, updated_at)
       SELECT e.seq, w.id, 'pending', 0, ?2, ?2, ?2 FROM events e JOIN webhook_endpoints w ON w.account_id = e.account_id
       WHERE e.seq = ?1 AND (w.events IS NULL OR instr(w.events, ',' || e.type || ',') > 0)
       ON CONFLICT (event_seq, endpoint_id) DO UPDATE SET status = 'pending', attempts = 0, first_at = ?2, next_at = ?2,
         lease_until = NULL, lease_owner = NULL, last_error = NULL, updated_at = ?2`,
      [eventSeq, at],
    ).changes
  }

  async failedEvents(limit: number): Promise<number[]> {
    return this.c
      .query<{ seq: number }, [number]>(`SELECT DISTINCT event_seq AS seq FROM event_deliveries WHERE status = 'failed' ORDER BY event_seq LIMIT ?1`)
      .all(limit)
      .map((r) => r.seq)
  }

  async hasDue(now: number): Promise<boolean> {
    return (
      this.c
        .query<{ one: number }, [number]>(
          `SELECT 1 AS one FROM event_deliveries WHERE status = 'pending' AND next_at <= ?1 AND (lease_until IS NULL OR lease_until <= ?1) LIMIT 1`,
        )
        .get(now) !== null
    )
  }

  async claim(now: number, leaseUntil: number, owner: string, limit: number): Promise<DueDelivery[]> {
    const due = this.c
      .query<DueDelivery, [number, number]>(
        `SELECT d.event_seq AS eventSeq, d.endpoint_id AS endpointId, e.id AS eventId, e.body, w.url, w.secret, w.prev_secret AS prevSecret,
           w.rotated_at AS rotatedAt, d.attempts, d.first_at AS firstAt
         FROM event_deliveries d JOIN events e ON e.seq = d.event_seq JOIN webhook_endpoints w ON w.id = d.endpoint_id
         WHERE d.status = 'pending' AND d.next_at <= ?1 AND (d.lease_until IS NULL OR d.lease_until <= ?1)
         ORDER BY d.next_at LIMIT ?2`,
      )
      .all(now, limit)
    const lease = this.c.prepare<unknown, [number, number, number, string]>(
      'UPDATE event_deliveries SET lease_until = ?3, lease_owner = ?4 WHERE event_seq = ?1 AND endpoint_id = ?2',
    )
    for (const d of due) lease.run(d.eventSeq, d.endpointId, leaseUntil, owner)
    return due
  }

  async finish(r: DeliveryResult): Promise<boolean> {
    return (
      this.c.run(
        `UPDATE event_deliveries SET status = ?4, attempts = ?5, next_at = ?6, last_error = ?7, updated_at = ?8, lease_until = NULL, lease_owner = NULL
         WHERE event_seq = ?1 AND endpoint_id = ?2 AND lease_owner = ?3 AND status = 'pending'`,
        [r.eventSeq, r.endpointId, r.owner, r.status, r.attempts, r.nextAt, r.error, r.at],
      ).changes === 1
    )
  }

  async outboxDepth(): Promise<number> {
    return this.c.query<{ n: number }, []>(`SELECT count(*) AS n FROM event_deliveries WHERE status = 'pending'`).get()!.n
  }
}

function endpoint(r: RawEndpoint): EndpointRow {
  return { ...r, events: r.events === null ? null : (r.events.split(',').filter((t) => t !== '') as EventType[]) }
}

function eventRow(r: EventRow & { accountId?: number }): EventRow {
  const { accountId: _, ...rest } = r
  return rest
}
