/**
 * Webhook endpoints, the event log and the delivery queue.
 */
import type { EventType } from './events.ts'

export type EventDeliveryStatus = 'pending' | 'delivered' | 'failed'
/** An event's state over its deliveries: any failed, else any pending, else delivered; `none` when it went to no endpoint. */
export type EventStatus = EventDeliveryStatus | 'none'

export interface EndpointRow {
  id: number
  accountId: number
  account: string
  url: string
  /** Null: every type. */
  events: EventType[] | null
  secret: Uint8Array
  prevSecret: Uint8Array | null
  rotatedAt: number | null
  createdAt: number
}

export interface EventRow {
  seq: number
  id: string
  account: string
  type: EventType
  verificationId: string | null
  sequence: number
  occurredAt: number
  status: EventStatus
  /** Deliveries (one per endpoint it went to). */
  endpoints: number
  attempts: number
  lastError: string | null
  /** A `send.blocked` event's refusal: the fraud guard's rule, the country, and the refused send's channel and masked recipient; else null. */
  blocked: { rule: string; country: string | null; channel: string | null; recipient: string | null } | null
}

/** A delivery that this process now holds the lease of (events/dispatcher.ts). */
export interface DueDelivery {
  eventSeq: number
  endpointId: number
  eventId: string
  body: string
  url: string
  secret: Uint8Array
  prevSecret: Uint8Array | null
  rotatedAt: number | null
  attempts: number
  firstAt: number
}

export interface DeliveryResult {
  eventSeq: number
  endpointId: number
  owner: string
  status: EventDeliveryStatus
  attempts: number
  nextAt: number
  error: string | null
  at: number
  /** When the try began (its endpoint's pause counts only tries begun after the last pause ended); `at` when not given. */
  startedAt?: number
}

/** Endpoints, the event log and the delivery queue. */
export interface WebhookRepo {
  insertEndpoint(e: { accountId: number; url: string; events: EventType[] | null; secret: Uint8Array; at: number }): Promise<number>
  listEndpoints(accountId?: number): Promise<EndpointRow[]>
  findEndpoint(id: number): Promise<EndpointRow | undefined>
  /** Removes the endpoint and the deliveries still due to it. */
  deleteEndpoint(id: number): Promise<void>
  setSecret(id: number, secret: Uint8Array, prevSecret: Uint8Array, at: number): Promise<void>
  listEvents(q: { accountId?: number; status?: EventDeliveryStatus; type?: EventType; limit: number }): Promise<EventRow[]>
  findEvent(id: string): Promise<EventRow | undefined>
  /**
   * Makes the event's deliveries pending again, tried from `at` for a new
   * 24 h: to every endpoint of its account now subscribed to its type, or
   * (`onlyFailed`) only the deliveries that failed. Returns how many.
   */
  rearm(eventSeq: number, at: number, onlyFailed: boolean): Promise<number>
  /** Events with a failed delivery, oldest first. */
  failedEvents(limit: number): Promise<number[]>
  /**
   * Whether some pending delivery is due at `now`, not leased, to an endpoint
   * not paused with fewer than `perEndpoint` deliveries leased (the claim would take it).
   */
  hasDue(now: number, perEndpoint?: number): Promise<boolean>
  /**
   * Leases up to `limit` due deliveries to `owner` until `leaseUntil`, in
   * fair turns (otp/endpoint-turns.ts, docs/events.md#fair-turns-and-slow-endpoints):
   * endpoints paused are skipped, no endpoint gets more than `perEndpoint`
   * leased at once (counting every owner's), and accounts, then each
   * account's endpoints, take turns, the longest waiting first. Without
   * `perEndpoint`, `limit` is the only bound.
   */
  claim(now: number, leaseUntil: number, owner: string, limit: number, perEndpoint?: number): Promise<DueDelivery[]>
  /**
   * Records an attempt's outcome, if `owner` still holds the lease (a replay
   * meanwhile takes it away), and with it the endpoint's run of failures
   * and its pause.
   */
  finish(r: DeliveryResult): Promise<boolean>
  /** Deliveries pending (the outbox depth). */
  outboxDepth(): Promise<number>
  /** Deliveries pending, counted up to `limit` at most (the ceiling's read, docs/events.md#a-ceiling-on-queued-events: its cost stays bounded). */
  queuedUpTo(limit: number): Promise<number>
  /** Endpoints that failed PAUSE_AFTER_FAILURES tries in a row or more: paused, or tried one at a time (otp/endpoint-turns.ts). */
  failingEndpoints(): Promise<number>
}
