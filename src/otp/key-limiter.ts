/**
 * Per-key request limit (DECISIONS.md section 5): at most N admitted requests
 * in any rolling 60 s, across both endpoints. A rejected request is not
 * recorded, so a client that backs off for `retry_after` seconds gets in.
 */
import type { Clock } from '../lib/clock.ts'
import type { EventLog, KeyStore, Transactor } from './ports.ts'
import { secondsUntil, waitForRoomInLog } from './windows.ts'

export const KEY_WINDOW_MS = 60_000

export type Admission = { ok: true } | { ok: false; max: number; retryAfter: number }

export class KeyLimiter {
  constructor(
    private readonly tx: Transactor,
    private readonly hits: EventLog,
    private readonly keys: KeyStore,
    private readonly clock: Clock,
    private readonly max: number,
  ) {}

  admit(keyId: number): Admission {
    const subject = String(keyId)
    return this.tx.atomically(() => {
      const now = this.clock.now()
      const wait = waitForRoomInLog(this.hits, subject, KEY_WINDOW_MS, this.max, now)
      if (wait > 0) return { ok: false, max: this.max, retryAfter: secondsUntil(wait) }
      this.hits.record(subject, now)
      this.keys.touch(keyId, now) // same transaction: no extra commit per request
      return { ok: true }
    })
  }
}
