/**
 * What the domain needs from the outside world, declared here and implemented
 * by `store/` (a storage engine) and `delivery/`; only app.ts wires concrete
 * implementations in.
 *
 * Storage is asynchronous and may fail: every call may await (a networked
 * engine), a commit may fail, a connection may drop. The domain keeps every
 * rule that must hold under concurrency inside one `write` transaction, and
 * keeps no count in memory that another process or node could contradict.
 */
import type { AdminRepo } from './admin.ts'
import type { FraudStore } from './fraud.ts'
import type { WebhookRepo } from './webhooks.ts'
import type { DeliveryState, OutboundMessage, ReceiptState, StoredKey, Verification } from './types.ts'

/**
 * Runs the domain's transactions. `write` gives one transaction: all of its
 * writes land, or none. It resolves once the commit is durable, and rejects
 * when a statement or the commit fails (nothing of it is in force) or when the
 * engine could not get the write lock within its busy timeout. `fn` may run
 * more than once (an engine may retry it, or run it again after another
 * transaction of a shared commit failed): it may only await the repositories
 * it is given, and do nothing outside them that is unsafe to repeat.
 * `read` sees committed state only and never waits for the write lock.
 */
export interface Storage {
  write<T>(fn: (r: Repos) => Promise<T>): Promise<T>
  read<T>(fn: (r: Repos) => Promise<T>): Promise<T>
  /**
   * `listener` hears when what this process remembers from earlier
   * transactions may no longer be what is stored (a rollback, or a write by
   * another process), so it can drop such copies.
   */
  onStale(listener: () => void): void
}

/** The repositories a transaction works with. */
export interface Repos {
  keys: KeyStore
  keyHits: KeyHitLog
  failures: EventLog<Uint8Array>
  verifications: VerificationStore
  credits: CreditStore
  admin: AdminRepo
  events: EventOutbox
  webhooks: WebhookRepo
  idempotency: IdempotencyStore
  fraud: FraudStore
}

/** The event types of EXTENSIONS.md section 3. */
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
  | 'send.blocked'

/** A verification's status as EXTENSIONS.md section 1 decides it. */
export type VerificationStatus = 'pending' | 'approved' | 'expired' | 'locked' | 'canceled' | 'failed'

/** One event, written in the transaction of the change it reports. */
export interface NewEvent {
  type: EventType
  accountId: number
  /** When the change happened (clock ms): the body's `occurred_at`. */
  at: number
  /** The verification after the change; null for `send.blocked`. */
  verification: Verification | null
  /** The section 1 status after the change; null for `send.blocked`. */
  status: VerificationStatus | null
  /** The type's extra `data` fields (`provider`, `failed_attempts`, `retry_after`, `rule`, `country`, `prefix`). */
  extra: Record<string, string | number | null>
}

/** The outbox of outgoing webhook events (EXTENSIONS.md section 3). */
export interface EventOutbox {
  /**
   * Writes the event (its id, `sequence` and body decided here, in the
   * caller's transaction) and one pending delivery per endpoint of the
   * account subscribed to its type.
   */
  add(event: NewEvent): Promise<void>
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

export interface KeyStore {
  findByPrefix(prefix: string): Promise<StoredKey[]>
  /** Records when a key was last used (shown by `otpd keys list`). */
  touch(keyId: number, at: number): Promise<void>
}

/** A log of timestamps per subject, read as rolling windows. */
export interface EventLog<Subject = string> {
  /** Time of the subject's n-th most recent event (1 = the newest), if it has that many. */
  nthLatest(subject: Subject, n: number): Promise<number | undefined>
  record(subject: Subject, at: number): Promise<void>
}

/** Admitted requests per key id, in admission order: the per-key rolling window. */
export type KeyHitLog = EventLog<number>

/** A charged send whose delivery outcome was never recorded. */
export interface UnsettledSend {
  seq: number
  id: string
  accountId: number
}

export interface VerificationStore {
  /** The row number for the next verification, taken in the transaction that inserts it. */
  nextSeq(): Promise<number>
  insert(v: Verification): Promise<void>
  /**
   * The verification `id` names under this key: the row `seq` (read from the
   * id, null when it carries none) if that row has exactly this id, else one
   * made before ids carried row numbers.
   */
  findForKey(id: string, seq: number | null, keyId: number): Promise<Verification | undefined>
  /** Creation times (ascending) of non-test sends to a recipient since `since` that did not fail (canceled ones count). */
  recipientSendTimes(recipientHash: Uint8Array, since: number): Promise<number[]>
  markUsed(seq: number, at: number): Promise<void>
  /** Takes the verification out of use as `canceled` (verify then answers 404). */
  cancel(seq: number): Promise<void>
  setAttempts(seq: number, failedAttempts: number, lockedUntil: number | null): Promise<void>
  /**
   * Records how a delivery ended. `failed` also takes the verification out of
   * use (verify answers 404). Only a delivery still `sending` changes: false
   * when it had already been settled (by recovery, or another node).
   */
  settleDelivery(seq: number, state: Exclude<DeliveryState, 'sending' | ReceiptState>, provider: string | null, at: number): Promise<boolean>
  /** The verification row `seq` if it has exactly this id, whatever its key (delivery receipts carry no API key). */
  findById(id: string, seq: number): Promise<Verification | undefined>
  /**
   * Records a delivery receipt's final status. Only a delivery still
   * `sending`, or `accepted` by this same provider, changes: a final status
   * stays, and `failed`/`unknown` (refunded) are kept. False when nothing changed.
   */
  recordReceipt(seq: number, state: ReceiptState, provider: string, at: number): Promise<boolean>
  /** Charged sends still `sending` that were created at or before `before`, oldest first, at most `limit`. */
  unsettled(before: number, limit: number): Promise<UnsettledSend[]>
}

/**
 * A response stored for an Idempotency-Key (EXTENSIONS.md section 2): the
 * status and the exact body text the first request answered. The domain
 * stores and returns it without reading it; the HTTP layer makes and replays it.
 */
export interface StoredAnswer {
  status: number
  body: string
}

/** What an Idempotency-Key is scoped to: the API key, the method and the path. */
export interface IdempotencyScope {
  keyId: number
  method: string
  path: string
  key: string
}

export interface IdempotencyRecord {
  /** Keyed hash of the first request's canonical body. */
  fingerprint: Uint8Array
  /**
   * `running`: a send whose delivery is under way; `answer` is what it answers
   * once in force. `done`: `answer` is the stored response.
   */
  state: 'running' | 'done'
  answer: StoredAnswer
  createdAt: number
}

export interface IdempotencyStore {
  /** The record of this scope made after `since` (an older one has expired and counts as none). */
  find(scope: IdempotencyScope, since: number): Promise<IdempotencyRecord | undefined>
  /**
   * Records the first request of a scope, replacing an expired record.
   * `verificationSeq` names the send whose delivery settles a `running` record.
   */
  save(scope: IdempotencyScope, record: IdempotencyRecord, verificationSeq: number | null): Promise<void>
  /**
   * The send `verificationSeq` is settled: its `running` record becomes `done`,
   * with `answer`, or with the answer it holds when null. Nothing when none is running.
   */
  settle(verificationSeq: number, answer: StoredAnswer | null): Promise<void>
}

export interface LedgerEntry {
  accountId: number
  kind: 'grant' | 'debit' | 'refund'
  amount: number
  verificationId?: string
  note?: string
  at: number
}

export interface CreditStore {
  balance(accountId: number): Promise<number>
  /** Appends a ledger row and moves the balance in step. */
  post(entry: LedgerEntry): Promise<void>
  /** Posts a debit if the balance covers it (check and move in one statement); false when it does not. */
  debit(entry: Omit<LedgerEntry, 'kind'>): Promise<boolean>
  codeLength(accountId: number): Promise<number | null>
}

/** Delivers one message over its channel; throws when every provider failed. */
export interface Delivery {
  deliver(message: OutboundMessage): Promise<{ provider: string }>
}
