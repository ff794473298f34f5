/**
 * API keys as a send or verify finds them, and the rolling-window logs.
 */
import type { StoredKey } from '../types.ts'

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

/** Verify failures per recipient hash (keyed by account): the 24 h failure cap. */
export interface FailureLog extends EventLog<Uint8Array> {
  /**
   * The times of the subject's n-th and (n-1)-th most recent events, in one
   * look-up: enough to know its n-th most recent now and once one more is
   * recorded (otp/failure-cap.ts nthAfter). `previous` is undefined for n = 1.
   */
  nthLatestPair(subject: Uint8Array, n: number): Promise<{ nth: number | undefined; previous: number | undefined }>
}

/** Admitted requests per key id, in admission order: the per-key rolling window. */
export interface KeyHitLog extends EventLog<number> {
  /**
   * Records a request admitted into a window with room for `max` in
   * `windowMs`. An engine whose window read took no lock checks the room
   * again at COMMIT, under the key's lock, and runs the write again when the
   * window filled meanwhile (PostgreSQL: docs/multi-node.md#one-busy-key).
   */
  record(keyId: number, at: number, room?: { max: number; windowMs: number }): Promise<void>
}
