/**
 * Webhook endpoints, the event log and the delivery queue
 * (otp/ports/webhooks.ts WebhookRepo): the shared statements of
 * store/sql/webhooks.ts.
 *
 * One sender at a time across nodes: `claim` leases due deliveries with one
 * UPDATE over rows picked `FOR UPDATE SKIP LOCKED`, so two nodes claiming at
 * once take different rows (a row another claim holds is skipped, and one it
 * leased no longer matches once its lock is free); `finish` records an
 * outcome only while its owner still holds the lease.
 */
import type { DeliveryResult, DueDelivery, EndpointRow, EventDeliveryStatus, EventRow, EventType, WebhookRepo } from '../../otp/ports/index.ts'
import { POSTGRES } from '../sql/dialect.ts'
import { num } from '../sql/values.ts'
import { CLAIMED_COLUMNS, DUE, EVENT_ROWS, storedEventTypes, toDueDelivery, toEndpoint, toEventRow, webhookSql } from '../sql/webhooks.ts'
import type { Tx } from './client.ts'

const SHARED = webhookSql(POSTGRES)
/** PostgreSQL's own: event ids are random, found through their unique index. */
const FIND_EVENT = `${EVENT_ROWS} WHERE e.id = $1) x`
/** PostgreSQL's own: the event's row lock, as the sweep takes it (store/pg/sweep.ts). */
const LOCK_EVENT = 'SELECT 1 FROM events WHERE seq = $1 FOR UPDATE'
/** PostgreSQL's own: due rows picked and leased in one statement, skipping those another node's claim holds. */
const CLAIM = `WITH due AS (
    SELECT event_seq, endpoint_id FROM event_deliveries d WHERE ${DUE}
    ORDER BY next_at LIMIT $4 FOR UPDATE SKIP LOCKED
  ), leased AS (
    UPDATE event_deliveries l SET lease_until = $2, lease_owner = $3 FROM due
    WHERE l.event_seq = due.event_seq AND l.endpoint_id = due.endpoint_id
    RETURNING l.event_seq, l.endpoint_id, l.attempts, l.first_at, l.next_at
  )
  SELECT ${CLAIMED_COLUMNS}
  FROM leased d JOIN events e ON e.seq = d.event_seq JOIN webhook_endpoints w ON w.id = d.endpoint_id
  ORDER BY d.next_at`

export class PgWebhookRepo implements WebhookRepo {
  constructor(private readonly tx: Tx) {}

  async insertEndpoint(e: { accountId: number; url: string; events: EventType[] | null; secret: Uint8Array; at: number }): Promise<number> {
    const rows = await this.tx.q(SHARED.insertEndpoint, [e.accountId, e.url, storedEventTypes(e.events), e.secret, e.at])
    return num(rows[0]!.id)
  }

  async listEndpoints(accountId?: number): Promise<EndpointRow[]> {
    const rows = accountId === undefined ? await this.tx.q(SHARED.listEndpoints) : await this.tx.q(SHARED.listAccountEndpoints, [accountId])
    return rows.map(toEndpoint)
  }

  async findEndpoint(id: number): Promise<EndpointRow | undefined> {
    const rows = await this.tx.q(SHARED.findEndpoint, [id])
    return rows[0] === undefined ? undefined : toEndpoint(rows[0])
  }

  async deleteEndpoint(id: number): Promise<void> {
    this.tx.exec(SHARED.deleteEndpointDeliveries, [id])
    this.tx.exec(SHARED.deleteEndpoint, [id])
  }

  async setSecret(id: number, secret: Uint8Array, prevSecret: Uint8Array, at: number): Promise<void> {
    this.tx.exec(SHARED.setSecret, [id, secret, prevSecret, at])
  }

  async listEvents(q: { accountId?: number; status?: EventDeliveryStatus; type?: EventType; limit: number }): Promise<EventRow[]> {
    // The newest `limit`, shown oldest first.
    const rows = await this.tx.q(SHARED.listEvents, [q.accountId ?? null, q.status ?? null, q.limit, q.type ?? null])
    return rows.reverse().map(toEventRow)
  }

  async findEvent(id: string): Promise<EventRow | undefined> {
    if (id.includes('\u0000')) return undefined
    const rows = await this.tx.q(FIND_EVENT, [id])
    return rows[0] === undefined ? undefined : toEventRow(rows[0])
  }

  async rearm(eventSeq: number, at: number, onlyFailed: boolean): Promise<number> {
    // An event swept meanwhile re-arms nothing.
    this.tx.exec(LOCK_EVENT, [eventSeq])
    return this.tx.run(onlyFailed ? SHARED.rearmFailed : SHARED.rearmAll, [eventSeq, at])
  }

  async failedEvents(limit: number): Promise<number[]> {
    return (await this.tx.q(SHARED.failedEvents, [limit])).map((r) => num(r.event_seq))
  }

  async hasDue(now: number): Promise<boolean> {
    return (await this.tx.q(SHARED.hasDue, [now])).length > 0
  }

  async claim(now: number, leaseUntil: number, owner: string, limit: number): Promise<DueDelivery[]> {
    return (await this.tx.q(CLAIM, [now, leaseUntil, owner, limit])).map(toDueDelivery)
  }

  async finish(r: DeliveryResult): Promise<boolean> {
    return (await this.tx.run(SHARED.finish, [r.eventSeq, r.endpointId, r.owner, r.status, r.attempts, r.nextAt, r.error, r.at])) === 1
  }

  async outboxDepth(): Promise<number> {
    return num((await this.tx.q(SHARED.outboxDepth))[0]!.n)
  }
}
