/**
 * Per-key request limit (DECISIONS.md section 5): at most N admitted requests
 * in any rolling 60 s, across both endpoints. A rejected request is not
 * recorded, so a client that backs off for `retry_after` seconds gets in.
 *
 * The hit is recorded inside the operation's own transaction (`admit`, called
 * by the send and verify services), where the limit is checked again: exact
 * under concurrency and across processes, with no transaction of its own. A
 * request that ends before its operation (a 400 or 413) is counted by
 * `admitAlone`, a small grouped transaction. `peek` is a read before the body
 * is read, so a limited client gets its 429 without sending its body.
 *
 * `api_keys.last_used_at` is written in the same transaction, at most once a
 * second per key and process: it is at most about a second behind.
 */
import type { Clock } from '../lib/clock.ts'
import type { KeyHitLog, KeyStore, Transactor } from './ports.ts'
import { secondsUntil } from './windows.ts'

export const KEY_WINDOW_MS = 60_000
export const TOUCH_EVERY_MS = 1_000

export type Admission = { ok: true } | { ok: false; max: number; retryAfter: number }

export class KeyLimiter {
  private readonly touched = new Map<number, number>()

  constructor(
    private readonly tx: Transactor,
    private readonly hits: KeyHitLog,
    private readonly keys: KeyStore,
    private readonly clock: Clock,
    private readonly max: number,
  ) {}

  /** Whether the key would be refused now. Reads only; the decision that counts is `admit`'s. */
  peek(keyId: number): Admission {
    return this.decide(keyId, this.clock.now())
  }

  /** Inside a transaction: refuses, or records the hit. */
  admit(keyId: number): Admission {
    const now = this.clock.now()
    const a = this.decide(keyId, now)
    if (!a.ok) return a
    this.hits.record(keyId, now)
    const last = this.touched.get(keyId)
    if (last === undefined || now - last >= TOUCH_EVERY_MS || now < last) {
      this.keys.touch(keyId, now)
      this.touched.set(keyId, now)
    }
    return a
  }

  /** For a request that ends before its operation: counts it in a transaction of its own. */
  admitAlone(keyId: number): Promise<Admission> {
    return this.tx.grouped(() => this.admit(keyId))
  }

  private decide(keyId: number, now: number): Admission {
    // The window is full when the max-th most recent hit is still inside it;
    // room returns when that hit leaves.
    const t = this.hits.nthLatest(keyId, this.max)
    if (t === undefined || t + KEY_WINDOW_MS <= now) return { ok: true }
    return { ok: false, max: this.max, retryAfter: secondsUntil(t + KEY_WINDOW_MS - now) }
  }
}
