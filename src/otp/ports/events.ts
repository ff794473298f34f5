/**
 * The outbox of webhook events: what a change writes in its own transaction
 * (docs/events.md).
 */
import type { Verification } from '../types.ts'

/** The event types of docs/api.md#events. */
export type EventType =
  | 'verification.sent'
  | 'verification.delivered'
  | 'verification.undelivered'
  | 'verification.delivery_failed'
  | 'verification.approved'
  | 'verification.attempt_failed'
  | 'verification.locked'
  | 'verification.expired'
  | 'verification.canceled'
  /** A workflow's next step started (docs/api.md#workflows). */
  | 'verification.fallback'
  | 'send.blocked'

/** A verification's status as docs/api.md#verification-status decides it. */
export type VerificationStatus = 'pending' | 'approved' | 'expired' | 'locked' | 'canceled' | 'failed'

/** One event, written in the transaction of the change it reports. */
export interface NewEvent {
  type: EventType
  accountId: number
  /** When the change happened (clock ms): the body's `occurred_at`. */
  at: number
  /** The verification after the change; null for `send.blocked`. */
  verification: Verification | null
  /** The status (docs/api.md#verification-status) after the change; null for `send.blocked`. */
  status: VerificationStatus | null
  /** The type's extra `data` fields (`provider`, `failed_attempts`, `retry_after`, `rule`, `country`, `prefix`). */
  extra: Record<string, string | number | null>
  /** `send.blocked`: the refused recipient's keyed hash (as a verification's), for the console's search by recipient. */
  recipientHash?: Uint8Array
}

/** The outbox of outgoing webhook events (docs/api.md#events). */
export interface EventOutbox {
  /**
   * Writes the event (its id, `sequence` and body decided here, in the
   * caller's transaction) and one pending delivery per endpoint of the
   * account subscribed to its type.
   */
  add(event: NewEvent): Promise<void>
  /**
   * An event about `v` is coming in this transaction: an engine that reads
   * what numbers it (PostgreSQL: the account's name and the verification's
   * last `sequence`) sends that read now, so that it travels with the
   * caller's next reads instead of a round trip of its own. The caller holds
   * the verification's row (a write that found or changed it). Nothing to do
   * for an engine that keeps them in memory.
   */
  prepare(v: Pick<Verification, 'id' | 'seq' | 'accountId'>): void
  /**
   * Verifications that expired in (`from`, `to`], unused and not failed, that
   * have no `verification.expired` or `verification.canceled` event yet:
   * oldest expiry first, at most `limit`.
   */
  expiredUnreported(from: number, to: number, limit: number): Promise<Verification[]>
  /** Up to when expiries have been reported (otp/events.ts reportExpired); null before the first scan. */
  expiryCursor(): Promise<number | null>
  setExpiryCursor(at: number): Promise<void>
}
