/**
 * Responses stored under an Idempotency-Key.
 */

/**
 * A response stored for an Idempotency-Key (docs/api.md#idempotency-keys): the
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
