/**
 * Webhook endpoints, the event log and the delivery queue
 * (otp/ports/webhooks.ts WebhookRepo): the statements both engines run, and
 * their row mappers. An event's status is derived from its deliveries: any
 * failed, else any pending, else delivered; `none` when it went nowhere.
 *
 * Each engine keeps its own look-up of an event by id (SQLite's ids name
 * their row, PostgreSQL's are found through an index of ids) and its own
 * claim (PostgreSQL's claims run one at a time under a lock of their own, so
 * nodes claiming at once take different rows and count each other's leases;
 * SQLite's single writer needs no lock).
 */
import { FIRST_PAUSE_MS, MAX_PAUSE_MS, PAUSE_AFTER_FAILURES, PROBE_IN_FLIGHT } from '../../otp/endpoint-turns.ts'
import type { DueDelivery, EndpointRow, EventRow, EventType } from '../../otp/ports/index.ts'
import type { Dialect } from './dialect.ts'
import { subscribed } from './events.ts'
import { bytes, bytesOrNull, num, numOrNull, type Row } from './values.ts'

const ENDPOINT = `SELECT w.id, w.account_id, a.name AS account, w.url, w.events, w.secret, w.prev_secret, w.rotated_at, w.created_at
  FROM webhook_endpoints w JOIN accounts a ON a.id = w.account_id`

const EVENT_STATUS = `CASE
    WHEN EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_seq = e.seq AND d.status = 'failed') THEN 'failed'
    WHEN EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_seq = e.seq AND d.status = 'pending') THEN 'pending'
    WHEN EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_seq = e.seq) THEN 'delivered'
    ELSE 'none' END`

/** Events as `otpd events` shows them: a derived table (`x`), which a statement ends with its own WHERE of `e`, a `)` and `x`. */
export const EVENT_ROWS = `SELECT * FROM (SELECT e.seq, e.id, a.name AS account, e.type, e.verification_id, e.sequence,
  e.occurred_at, e.account_id, ${EVENT_STATUS} AS status, CASE WHEN e.type = 'send.blocked' THEN e.body END AS blocked_body,
  (SELECT count(*) FROM event_deliveries d WHERE d.event_seq = e.seq) AS endpoints,
  (SELECT coalesce(sum(d.attempts), 0) FROM event_deliveries d WHERE d.event_seq = e.seq) AS attempts,
  (SELECT d.last_error FROM event_deliveries d WHERE d.event_seq = e.seq AND d.last_error IS NOT NULL ORDER BY d.updated_at DESC LIMIT 1) AS last_error
  FROM events e JOIN accounts a ON a.id = e.account_id`

/** `perEndpoint` when none is given to hasDue: no endpoint limit (an integer on both engines). */
export const NO_ENDPOINT_LIMIT = 2_147_483_647

/** A delivery the dispatcher may take at $1: pending, due, and not leased (or its lease over). `d` is event_deliveries. */
export const DUE = `d.status = 'pending' AND d.next_at <= $1 AND (d.lease_until IS NULL OR d.lease_until <= $1)`

/**
 * Each endpoint not paused at $1, with its room: how many more deliveries it
 * may have leased (`$2`, or one while it keeps failing) less those leased now,
 * by any owner. `hint` is SQLite's index of leases (store/sqlite/webhook-store.ts).
 */
export function endpointRoom(hint = ''): string {
  return `SELECT w.id, w.account_id,
      CASE WHEN w.failures >= ${PAUSE_AFTER_FAILURES} THEN ${PROBE_IN_FLIGHT} ELSE $2 END
      - (SELECT count(*) FROM event_deliveries l ${hint} WHERE l.endpoint_id = w.id AND l.lease_until > $1 AND l.status = 'pending') AS room
    FROM webhook_endpoints w WHERE w.paused_until IS NULL OR w.paused_until <= $1`
}

/** Whether the claim at $1 (endpoint limit $2) would take something. `hints`: SQLite's indexes of leases and of each endpoint's due deliveries. */
export function hasDueSql(hints = { leased: '', due: '' }): string {
  return `SELECT 1 AS one FROM (${endpointRoom(hints.leased)}) r
    WHERE r.room > 0 AND EXISTS (SELECT 1 FROM event_deliveries d ${hints.due} WHERE d.endpoint_id = r.id AND ${DUE}) LIMIT 1`
}

/**
 * An endpoint's run of failures and its pause (otp/endpoint-turns.ts), after
 * a try recorded with status `status`, begun at `started` and ended at `at`
 * (parameters): a success ends both; a failure counts, and the one that
 * reaches PAUSE_AFTER_FAILURES, or fails again after a pause ended, pauses
 * the endpoint (twice as long as the last pause). Tries begun before a
 * pause ended do not lengthen it: they were already in flight.
 */
export function endpointTried(d: Dialect, status: string, started: string, at: string): string {
  const ok = `${status} = 'delivered'`
  const pausing = `failures + 1 >= ${PAUSE_AFTER_FAILURES} AND (paused_until IS NULL OR paused_until <= ${started})`
  const pause = `CASE WHEN paused_until IS NULL THEN ${FIRST_PAUSE_MS} ELSE ${d.least('pause_ms * 2', String(MAX_PAUSE_MS))} END`
  return `UPDATE webhook_endpoints SET failures = CASE WHEN ${ok} THEN 0 ELSE failures + 1 END,
      pause_ms = CASE WHEN ${ok} THEN 0 WHEN ${pausing} THEN ${pause} ELSE pause_ms END,
      paused_until = CASE WHEN ${ok} THEN NULL WHEN ${pausing} THEN ${at} + ${pause} ELSE paused_until END`
}

/** The rows endpointTried changes: a success of an endpoint with no failure and no pause changes nothing, and is not written (most tries). */
export function endpointTriedChanges(status: string): string {
  return `NOT (${status} = 'delivered' AND failures = 0 AND paused_until IS NULL)`
}

/** The columns of a claimed delivery: `d` the delivery, `e` its event, `w` its endpoint. */
export const CLAIMED_COLUMNS = 'd.event_seq, d.endpoint_id, e.id AS event_id, e.body, w.url, w.secret, w.prev_secret, w.rotated_at, d.attempts, d.first_at'

export function webhookSql(d: Dialect) {
  return {
    insertEndpoint: 'INSERT INTO webhook_endpoints (account_id, url, events, secret, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id',
    listEndpoints: `${ENDPOINT} ORDER BY w.id`,
    listAccountEndpoints: `${ENDPOINT} WHERE w.account_id = $1 ORDER BY w.id`,
    findEndpoint: `${ENDPOINT} WHERE w.id = $1`,
    deleteEndpointDeliveries: 'DELETE FROM event_deliveries WHERE endpoint_id = $1',
    deleteEndpoint: 'DELETE FROM webhook_endpoints WHERE id = $1',
    setSecret: 'UPDATE webhook_endpoints SET secret = $2, prev_secret = $3, rotated_at = $4 WHERE id = $1',
    /**
     * The newest $3 events of account $1 (null: all) with status $2 (null:
     * any) and type $4 (null: any), newest first. The inner WHERE narrows to
     * events with a delivery of that status before the status is derived.
     */
    listEvents: `${EVENT_ROWS} WHERE (CAST($2 AS TEXT) IS NULL OR CAST($2 AS TEXT) = 'delivered'
        OR e.seq IN (SELECT event_seq FROM event_deliveries WHERE status = CAST($2 AS TEXT)))
        AND (CAST($4 AS TEXT) IS NULL OR e.type = CAST($4 AS TEXT))) x
      WHERE (CAST($1 AS INTEGER) IS NULL OR account_id = CAST($1 AS INTEGER)) AND (CAST($2 AS TEXT) IS NULL OR status = CAST($2 AS TEXT))
      ORDER BY seq DESC LIMIT $3`,
    rearmFailed: `UPDATE event_deliveries SET status = 'pending', attempts = 0, first_at = $2, next_at = $2, lease_until = NULL, lease_owner = NULL,
        last_error = NULL, updated_at = $2
      WHERE event_seq = $1 AND status = 'failed'`,
    /** Every endpoint of the event's account now subscribed to its type: a new pending delivery, or its old one pending again. */
    rearmAll: `INSERT INTO event_deliveries (event_seq, endpoint_id, status, attempts, first_at, next_at, updated_at)
      SELECT e.seq, w.id, 'pending', 0, $2, $2, $2 FROM events e JOIN webhook_endpoints w ON w.account_id = e.account_id
      WHERE e.seq = $1 AND ${subscribed(d, 'w', 'e.type')}
      ON CONFLICT (event_seq, endpoint_id) DO UPDATE SET status = 'pending', attempts = 0, first_at = $2, next_at = $2,
        lease_until = NULL, lease_owner = NULL, last_error = NULL, updated_at = $2`,
    /** A replay ends the pause of the endpoints it sends to, and their run of failures: the operator says they are fixed. */
    unpauseRearmed: `UPDATE webhook_endpoints SET failures = 0, pause_ms = 0, paused_until = NULL
      WHERE id IN (SELECT endpoint_id FROM event_deliveries WHERE event_seq = $1 AND status = 'pending') AND (failures > 0 OR paused_until IS NOT NULL)`,
    failedEvents: `SELECT DISTINCT event_seq FROM event_deliveries WHERE status = 'failed' ORDER BY event_seq LIMIT $1`,
    /** An attempt's outcome, only while `$3` holds the lease of a delivery still pending (a replay meanwhile takes the lease away). */
    finish: `UPDATE event_deliveries SET status = $4, attempts = $5, next_at = $6, last_error = $7, updated_at = $8, lease_until = NULL, lease_owner = NULL
      WHERE event_seq = $1 AND endpoint_id = $2 AND lease_owner = $3 AND status = 'pending'`,
    /** The endpoint $1's record of a try (endpointTried). */
    endpointTried: `${endpointTried(d, '$2', '$3', '$4')} WHERE id = $1 AND ${endpointTriedChanges('$2')}`,
    outboxDepth: `SELECT count(*) AS n FROM event_deliveries WHERE status = 'pending'`,
    queuedUpTo: `SELECT count(*) AS n FROM (SELECT 1 FROM event_deliveries WHERE status = 'pending' LIMIT $1) q`,
    failingEndpoints: `SELECT count(*) AS n FROM webhook_endpoints WHERE failures >= ${PAUSE_AFTER_FAILURES}`,
  } as const
}

/** `events` as stored: `,t1,t2,`, or null for every type. */
export function storedEventTypes(events: EventType[] | null): string | null {
  return events === null ? null : `,${events.join(',')},`
}

export function toEndpoint(r: Row): EndpointRow {
  const events = r.events as string | null
  return {
    id: num(r.id),
    accountId: num(r.account_id),
    account: r.account as string,
    url: r.url as string,
    events: events === null ? null : (events.split(',').filter((t) => t !== '') as EventType[]),
    secret: bytes(r.secret),
    prevSecret: bytesOrNull(r.prev_secret),
    rotatedAt: numOrNull(r.rotated_at),
    createdAt: num(r.created_at),
  }
}

export function toEventRow(r: Row): EventRow {
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
    blocked: blockedOf(r.blocked_body as string | null | undefined),
  }
}

/** What a `send.blocked` event's body says about the refusal (docs/api.md#events). */
function blockedOf(body: string | null | undefined): EventRow['blocked'] {
  if (body == null) return null
  const data = (JSON.parse(body) as { data?: Record<string, unknown> }).data ?? {}
  const text = (v: unknown) => (typeof v === 'string' ? v : null)
  return { rule: text(data.rule) ?? '', country: text(data.country), channel: text(data.channel), recipient: text(data.recipient) }
}

/** A row of CLAIMED_COLUMNS. */
export function toDueDelivery(r: Row): DueDelivery {
  return {
    eventSeq: num(r.event_seq),
    endpointId: num(r.endpoint_id),
    eventId: r.event_id as string,
    body: r.body as string,
    url: r.url as string,
    secret: bytes(r.secret),
    prevSecret: bytesOrNull(r.prev_secret),
    rotatedAt: numOrNull(r.rotated_at),
    attempts: num(r.attempts),
    firstAt: num(r.first_at),
  }
}
