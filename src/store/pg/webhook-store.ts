/**
 * Webhook endpoints, the event log and the delivery queue
 * (otp/ports/webhooks.ts WebhookRepo): the shared statements of
 * store/sql/webhooks.ts.
 *
 * One sender at a time across nodes: `claim` takes the claim's lock
 * (store/pg/locks.ts), so claims run one at a time and each counts the
 * leases the last one committed (an endpoint's limit holds across nodes), reads each
 * endpoint's due rows, picks them in fair turns (store/sql/fair-turns.ts)
 * and leases those picked that are still due; `finish` records an outcome only while its owner
 * still holds the lease, with the endpoint's run of failures in the same statement.
 */
import type { DeliveryResult, DueDelivery, EndpointRow, EventDeliveryStatus, EventRow, EventType, WebhookRepo } from '../../otp/ports/index.ts'
import { POSTGRES } from '../sql/dialect.ts'
import { pickFair } from '../sql/fair-turns.ts'
import { num } from '../sql/values.ts'
import {
  CLAIMED_COLUMNS,
  DUE,
  EVENT_ROWS,
  endpointRoom,
  endpointTried,
  endpointTriedChanges,
  hasDueSql,
  NO_ENDPOINT_LIMIT,
  storedEventTypes,
  toDueDelivery,
  toEndpoint,
  toEventRow,
  webhookSql,
} from '../sql/webhooks.ts'
import type { Tx } from './client.ts'
import type { TxLocks } from './locks.ts'

const SHARED = webhookSql(POSTGRES)
/** PostgreSQL's own: event ids are random, found through their unique index. */
const FIND_EVENT = `${EVENT_ROWS} WHERE e.id = $1) x`
/** PostgreSQL's own: the event's row lock, as the sweep takes it (store/pg/sweep.ts). */
const LOCK_EVENT = 'SELECT 1 FROM events WHERE seq = $1 FOR UPDATE'
/**
 * PostgreSQL's own: each endpoint's due rows with room ($1 now, $2 the
 * endpoint limit, $3 the claim's), read per endpoint along its index. Not
 * locked: only those picked are, by LEASE.
 */
const CANDIDATES = `SELECT r.account_id, c.event_seq, c.endpoint_id, c.next_at FROM (${endpointRoom()}) r
  CROSS JOIN LATERAL (
    SELECT d.event_seq, d.endpoint_id, d.next_at FROM event_deliveries d WHERE d.endpoint_id = r.id AND ${DUE}
    ORDER BY d.next_at LIMIT greatest(least(r.room, $3), 0)
  ) c`
/**
 * PostgreSQL's own: the rows picked ($4, a JSON array of [event_seq,
 * endpoint_id]) leased if still due at $1 (a replay or a removal that held
 * one meanwhile is waited for, and the row checked again), and read with
 * their event and endpoint, in one statement.
 */
const LEASE = `WITH picked AS (
    SELECT (x->>0)::bigint AS event_seq, (x->>1)::integer AS endpoint_id FROM jsonb_array_elements(CAST(CAST($4 AS text) AS jsonb)) x
  ), leased AS (
    UPDATE event_deliveries d SET lease_until = $2, lease_owner = $3 FROM picked p
    WHERE d.event_seq = p.event_seq AND d.endpoint_id = p.endpoint_id AND ${DUE}
    RETURNING d.event_seq, d.endpoint_id, d.attempts, d.first_at, d.next_at
  )
  SELECT ${CLAIMED_COLUMNS}
  FROM leased d JOIN events e ON e.seq = d.event_seq JOIN webhook_endpoints w ON w.id = d.endpoint_id`
/** PostgreSQL's own: the outcome and the endpoint's run of failures in one statement (one round trip); `n` is 1 when recorded. */
const FINISH = `WITH f AS (${SHARED.finish} RETURNING endpoint_id), e AS (
    ${endpointTried(POSTGRES, '$4', '$9', '$8')} WHERE id = (SELECT endpoint_id FROM f) AND ${endpointTriedChanges('$4')}
  )
  SELECT count(*) AS n FROM f`
const HAS_DUE = hasDueSql()

export class PgWebhookRepo implements WebhookRepo {
  constructor(
    private readonly tx: Tx,
    private readonly locks: TxLocks,
  ) {}

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
    const n = await this.tx.run(onlyFailed ? SHARED.rearmFailed : SHARED.rearmAll, [eventSeq, at])
    this.tx.exec(SHARED.unpauseRearmed, [eventSeq])
    return n
  }

  async failedEvents(limit: number): Promise<number[]> {
    return (await this.tx.q(SHARED.failedEvents, [limit])).map((r) => num(r.event_seq))
  }

  async hasDue(now: number, perEndpoint = NO_ENDPOINT_LIMIT): Promise<boolean> {
    return (await this.tx.q(HAS_DUE, [now, perEndpoint])).length > 0
  }

  async claim(now: number, leaseUntil: number, owner: string, limit: number, perEndpoint = limit): Promise<DueDelivery[]> {
    await this.locks.deliveryClaim()
    const rows = await this.tx.q(CANDIDATES, [now, perEndpoint, limit])
    const candidates = rows.map((r) => ({ eventSeq: num(r.event_seq), endpointId: num(r.endpoint_id), accountId: num(r.account_id), nextAt: num(r.next_at) }))
    const picked = pickFair(candidates, limit)
    if (picked.length === 0) return []
    const keys = JSON.stringify(picked.map((c) => [c.eventSeq, c.endpointId]))
    const leased = (await this.tx.q(LEASE, [now, leaseUntil, owner, keys])).map(toDueDelivery)
    // In the order picked.
    const at = new Map(picked.map((c, i) => [`${c.eventSeq}:${c.endpointId}`, i]))
    return leased.sort((a, b) => at.get(`${a.eventSeq}:${a.endpointId}`)! - at.get(`${b.eventSeq}:${b.endpointId}`)!)
  }

  async finish(r: DeliveryResult): Promise<boolean> {
    const params = [r.eventSeq, r.endpointId, r.owner, r.status, r.attempts, r.nextAt, r.error, r.at, r.startedAt ?? r.at]
    return num((await this.tx.q(FINISH, params))[0]!.n) === 1
  }

  async outboxDepth(): Promise<number> {
    return num((await this.tx.q(SHARED.outboxDepth))[0]!.n)
  }

  async queuedUpTo(limit: number): Promise<number> {
    return num((await this.tx.q(SHARED.queuedUpTo, [limit]))[0]!.n)
  }

  async failingEndpoints(): Promise<number> {
    return num((await this.tx.q(SHARED.failingEndpoints))[0]!.n)
  }
}
