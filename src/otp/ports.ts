/**
 * Interfaces the domain needs from the outside world. `store/` and `delivery/`
 * implement them; only app.ts wires concrete implementations in.
 */
import type { OutboundMessage, StoredKey, Verification } from './types.ts'

/** Runs `fn` in one IMMEDIATE transaction: all of its writes land, or none. */
export interface Transactor {
  atomically<T>(fn: () => T): T
  /**
   * Same guarantee, but `fn` may share one commit with other calls made at the
   * same time (group commit); it runs after them in call order and sees their
   * writes. Resolves once the commit is durable; rejects if `fn` throws (its
   * writes are undone) or the commit fails. `fn` may run more than once (when
   * another call of its batch throws, the batch is run again): outside the
   * database it may only do what is safe to repeat.
   */
  grouped<T>(fn: () => T): Promise<T>
}

export interface KeyStore {
  findByPrefix(prefix: string): StoredKey[]
  /** Records when a key was last used (shown by `otpd keys list`). */
  touch(keyId: number, at: number): void
}

/** A log of timestamps per subject, read as rolling windows. */
export interface EventLog<Subject = string> {
  /** Time of the subject's n-th most recent event (1 = the newest), if it has that many. */
  nthLatest(subject: Subject, n: number): number | undefined
  record(subject: Subject, at: number): void
}

/** Admitted requests per key id, in admission order: the per-key rolling window. */
export type KeyHitLog = EventLog<number>

export interface VerificationStore {
  /** The row number for the next verification, called in the transaction that inserts it. */
  nextSeq(): number
  insert(v: Verification): void
  /**
   * The verification `id` names under this key: the row `seq` (read from the
   * id, null when it carries none) if that row has exactly this id, else one
   * made before ids carried row numbers.
   */
  findForKey(id: string, seq: number | null, keyId: number): Verification | undefined
  /** Creation times (ascending) of active, non-test sends to a recipient since `since`. */
  recipientSendTimes(recipientHash: Uint8Array, since: number): number[]
  markUsed(seq: number, at: number): void
  setAttempts(seq: number, failedAttempts: number, lockedUntil: number | null): void
  markFailed(seq: number): void
}

export interface CreditStore {
  balance(accountId: number): number
  /** Appends a ledger row and moves the balance in step. */
  post(entry: { accountId: number; kind: 'grant' | 'debit' | 'refund'; amount: number; verificationId?: string; note?: string; at: number }): void
  /** Posts a debit if the balance covers it (check and move in one statement); false when it does not. */
  debit(entry: { accountId: number; amount: number; verificationId: string; at: number }): boolean
}

export interface AccountSettings {
  codeLength(accountId: number): number | null
}

/** Delivers one message over its channel; throws when every provider failed. */
export interface Delivery {
  deliver(message: OutboundMessage): Promise<{ provider: string }>
}
