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
