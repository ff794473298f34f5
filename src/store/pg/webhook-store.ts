/**
 * Webhook endpoints, the event log and the delivery queue on PostgreSQL
 * (otp/webhooks.ts WebhookRepo, as store/sqlite/webhook-store.ts). An event's
 * status is derived from its deliveries: any failed, else any pending, else
 * delivered; `none` when it went nowhere.
 *
 * One sender at a time across nodes: `claim` leases due deliveries with one
 * UPDATE over rows picked `FOR UPDATE SKIP LOCKED`, so two nodes claiming at
 * once take different rows (a row another claim holds is skipped, and one it
 * leased no longer matches once its lock is free); `finish` records an
 * outcome only while its owner still holds the lease.
 */
import type { DeliveryResult, DueDelivery, EndpointRow, EventDeliveryStatus, EventRow, EventType, WebhookRepo } from '../../otp/ports/index.ts'
import { num, numOrNull, type Tx } from './client.ts'

type Row = Record<string, unknown>

const ENDPOINT = `w.id, w.account_id, a.name AS account, w.url, w.events, w.secret, w.prev_secret, w.rotated_at, w.created_at
  FROM webhook_endpoints w JOIN accounts a ON a.id = w.account_id`

const EVENT_STATUS = `CASE
    WHEN EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_seq = e.seq AND d.status = 'failed') THEN 'failed'
    WHEN EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_seq = e.seq AND d.status = 'pending') THEN 'pending'
    WHEN EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_seq = e.seq) THEN 'delivered'
    ELSE 'none' END`

const EVENT = `SELECT * FROM (SELECT e.seq, e.id, a.name AS account, e.type, e.verification_id, e.sequence,
  e.occurred_at, e.account_id, ${EVENT_STATUS} AS status,
  (SELECT count(*) FROM event_deliveries d WHERE d.event_seq = e.seq) AS endpoints,
  (SELECT coalesce(sum(d.attempts), 0) FROM event_deliveries d WHERE d.event_seq = e.seq) AS attempts,
  (SELECT d.last_error FROM event_deliveries d WHERE d.event_seq = e.seq AND d.last_error IS NOT NULL ORDER BY d.updated_at DESC LIMIT 1) AS last_error
  FROM events e JOIN accounts a ON a.id = e.account_id`

export class PgWebhookRepo implements WebhookRepo {
  constructor(private readonly tx: Tx) {}

  async insertEndpoint(e: { accountId: number; url: string; events: EventType[] | null; secret: Uint8Array; at: number }): Promise<number> {
    const rows = await this.tx.q<Row>('INSERT INTO webhook_endpoints (account_id, url, events, secret, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id', [
      e.accountId,
      e.url,
      e.events === null ? null : `,${e.events.join(',')},`,
      e.secret,
      e.at,
    ])
    return num(rows[0]!.id)
  }

  async listEndpoints(accountId?: number): Promise<EndpointRow[]> {
    const rows =
      accountId === undefined
        ? await this.tx.q<Row>(`SELECT ${ENDPOINT} ORDER BY w.id`)
        : await this.tx.q<Row>(`SELECT ${ENDPOINT} WHERE w.account_id = $1 ORDER BY w.id`, [accountId])
    return rows.map(endpoint)
  }

  async findEndpoint(id: number): Promise<EndpointRow | undefined> {
    const rows = await this.tx.q<Row>(`SELECT ${ENDPOINT} WHERE w.id = $1`, [id])
    return rows[0] === undefined ? undefined : endpoint(rows[0])
  }

  async deleteEndpoint(id: number): Promise<void> {
    this.tx.exec('DELETE FROM event_deliveries WHERE endpoint_id = $1', [id])
    this.tx.exec('DELETE FROM webhook_endpoints WHERE id = $1', [id])
  }

  async setSecret(id: number, secret: Uint8Array, prevSecret: Uint8Array, at: number): Promise<void> {
    this.tx.exec('UPDATE webhook_endpoints SET secret = $2, prev_secret = $3, rotated_at = $4 WHERE id = $1', [id, secret, prevSecret, at])
  }

  async listEvents(q: { accountId?: number; status?: EventDeliveryStatus; limit: number }): Promise<EventRow[]> {
    // The newest `limit`, shown oldest first.
    const rows = await this.tx.q<Row>(
      `${EVENT} WHERE ($2::text IS NULL OR $2::text = 'delivered' OR e.seq IN (SELECT event_seq FROM event_deliveries WHERE status = $2::text))) x
       WHERE ($1::int IS NULL OR account_id = $1::int) AND ($2::text IS NULL OR status = $2::text) ORDER BY seq DESC LIMIT $3`,
      [q.accountId ?? null, q.status ?? null, q.limit],
    )
    return rows.reverse().map(eventRow)
  }

  async findEvent(id: string): Promise<EventRow | undefined> {
    if (id.includes('\u0000')) return undefined
    const rows = await this.tx.q<Row>(`${EVENT} WHERE e.id = $1) x`, [id])
    return rows[0] === undefined ? undefined : eventRow(rows[0])
  }

  async rearm(eventSeq: number, at: number, onlyFailed: boolean): Promise<number> {
    // The event's row lock, as the sweep takes it (store/pg/sweep.ts): an event swept meanwhile re-arms nothing.
    this.tx.exec('SELECT 1 FROM events WHERE seq = $1 FOR UPDATE', [eventSeq])
    if (onlyFailed) {
      return this.tx.run(
        `UPDATE event_deliveries SET status = 'pending', attempts = 0, first_at = $2, next_at = $2, lease_until = NULL, lease_owner = NULL,
           last_error = NULL, updated_at = $2 WHERE event_seq = $1 AND status = 'failed'`,
        [eventSeq, at],
      )
    }
    return this.tx.run(
      `INSERT INTO event_deliveries (event_seq, endpoint_id, status, attempts, first_at, next_at, updated_at)
       SELECT e.seq, w.id, 'pending', 0, $2, $2, $2 FROM events e JOIN webhook_endpoints w ON w.account_id = e.account_id
       WHERE e.seq = $1 AND (w.events IS NULL OR strpos(w.events, ',' || e.type || ',') > 0)
       ON CONFLICT (event_seq, endpoint_id) DO UPDATE SET status = 'pending', attempts = 0, first_at = $2, next_at = $2,
         lease_until = NULL, lease_owner = NULL, last_error = NULL, updated_at = $2`,
      [eventSeq, at],
    )
  }

  async failedEvents(limit: number): Promise<number[]> {
    const rows = await this.tx.q<Row>(`SELECT DISTINCT event_seq AS seq FROM event_deliveries WHERE status = 'failed' ORDER BY event_seq LIMIT $1`, [limit])
    return rows.map((r) => num(r.seq))
  }

  async hasDue(now: number): Promise<boolean> {
    const rows = await this.tx.q(
      `SELECT 1 AS one FROM event_deliveries WHERE status = 'pending' AND next_at <= $1 AND (lease_until IS NULL OR lease_until <= $1) LIMIT 1`,
      [now],
    )
    return rows.length > 0
  }

  async claim(now: number, leaseUntil: number, owner: string, limit: number): Promise<DueDelivery[]> {
    const rows = await this.tx.q<Row>(
      `WITH due AS (
         SELECT event_seq, endpoint_id FROM event_deliveries
         WHERE status = 'pending' AND next_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)
         ORDER BY next_at LIMIT $4 FOR UPDATE SKIP LOCKED
       ), leased AS (
         UPDATE event_deliveries d SET lease_until = $2, lease_owner = $3 FROM due
         WHERE d.event_seq = due.event_seq AND d.endpoint_id = due.endpoint_id
         RETURNING d.event_seq, d.endpoint_id, d.attempts, d.first_at, d.next_at
       )
       SELECT l.event_seq, l.endpoint_id, e.id AS event_id, e.body, w.url, w.secret, w.prev_secret, w.rotated_at, l.attempts, l.first_at
       FROM leased l JOIN events e ON e.seq = l.event_seq JOIN webhook_endpoints w ON w.id = l.endpoint_id
       ORDER BY l.next_at`,
      [now, leaseUntil, owner, limit],
    )
    return rows.map((r) => ({
      eventSeq: num(r.event_seq),
      endpointId: num(r.endpoint_id),
      eventId: r.event_id as string,
      body: r.body as string,
      url: r.url as string,
      secret: new Uint8Array(r.secret as Uint8Array),
      prevSecret: r.prev_secret === null ? null : new Uint8Array(r.prev_secret as Uint8Array),
      rotatedAt: numOrNull(r.rotated_at),
      attempts: num(r.attempts),
      firstAt: num(r.first_at),
    }))
  }

  async finish(r: DeliveryResult): Promise<boolean> {
    const n = await this.tx.run(
      `UPDATE event_deliveries SET status = $4, attempts = $5, next_at = $6, last_error = $7, updated_at = $8, lease_until = NULL, lease_owner = NULL
       WHERE event_seq = $1 AND endpoint_id = $2 AND lease_owner = $3 AND status = 'pending'`,
      [r.eventSeq, r.endpointId, r.owner, r.status, r.attempts, r.nextAt, r.error, r.at],
    )
    return n === 1
  }

  async outboxDepth(): Promise<number> {
    const rows = await this.tx.q<Row>(`SELECT count(*) AS n FROM event_deliveries WHERE status = 'pending'`)
    return num(rows[0]!.n)
  }
}

function endpoint(r: Row): EndpointRow {
  const events = r.events as string | null
  return {
    id: num(r.id),
    accountId: num(r.account_id),
    account: r.account as string,
    url: r.url as string,
    events: events === null ? null : (events.split(',').filter((t) => t !== '') as EventType[]),
    secret: new Uint8Array(r.secret as Uint8Array),
    prevSecret: r.prev_secret === null ? null : new Uint8Array(r.prev_secret as Uint8Array),
    rotatedAt: numOrNull(r.rotated_at),
    createdAt: num(r.created_at),
  }
}

function eventRow(r: Row): EventRow {
  return {
    seq: num(r.seq),
    id: r.id as string,
    account: r.account as string,
    type: r.type as EventType,
    verificationId: r.verification_id as string | null,
    sequence: num(r.sequence),
    occurredAt: num(r.occurred_at),
    status: r.status as EventRow['status'],
    endpoints: num(r.endpoints),
    attempts: num(r.attempts),
    lastError: r.last_error as string | null,
  }
}
