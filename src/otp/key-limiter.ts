/**
 * Per-key request limit (docs/api.md#limits): at most N admitted requests in any
 * rolling 60 s, across both endpoints; a rejected request is not recorded, so a
 * client that backs off for `retry_after` gets in. The hit is recorded inside
 * the operation's own transaction (`admit`), where the limit is checked again
 * (docs/multi-node.md#one-busy-key); a request that ends before its operation
 * (400, 413) is counted by `admitAlone`. `peek` answers from memory, so a known
 * limited client gets its 429 before its body is read. `last_used_at` is
 * written at most once a second per key and process.
 */
import type { Clock } from '../lib/clock.ts'
import type { VerificationIds } from '../lib/verification-id.ts'
import type { Repos, Storage } from './ports/index.ts'
import type { Limits } from './types.ts'
import { secondsUntil, waitForRoomInLog } from './windows.ts'

export const KEY_WINDOW_MS = 60_000
export const TOUCH_EVERY_MS = 1_000

export type Admission = { ok: true } | { ok: false; max: number; retryAfter: number }

/** A request the per-key limit refused, as every keyed operation answers it. */
export type KeyLimited = { kind: 'key_limited'; max: number; retryAfter: number }

/** The answer to a refused admission; null when admitted. */
export function keyLimitedBy(a: Admission): KeyLimited | null {
  return a.ok ? null : { kind: 'key_limited', max: a.max, retryAfter: a.retryAfter }
}

/** What an operation on one key's verification needs: its transaction, the verification's id, the time, the limits. */
export interface KeyedDeps {
  storage: Storage
  ids: VerificationIds
  clock: Clock
  limits: Limits
  limiter: KeyLimiter
}

export class KeyLimiter {
  private readonly touched = new Map<number, number>()
  /** Keys whose window this process saw full, and until when: hits leave a full window only with time. */
  private readonly fullUntil = new Map<number, number>()

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly max: number,
  ) {}

  /**
   * A refusal known without the database: the window was seen full and no hit
   * has left it since (none can be added while it is full, and hits are only
   * pruned once outside it). Otherwise `ok`, and `admit` decides.
   */
  peek(keyId: number): Admission {
    const until = this.fullUntil.get(keyId)
    if (until === undefined) return { ok: true }
    const now = this.clock.now()
    if (now >= until || now < until - KEY_WINDOW_MS) {
      this.fullUntil.delete(keyId)
      return { ok: true }
    }
    return this.refusal(until - now)
  }

  /** Inside a transaction: refuses, or records the hit. */
  async admit(r: Repos, keyId: number): Promise<Admission> {
    const now = this.clock.now()
    const wait = await waitForRoomInLog(r.keyHits, keyId, KEY_WINDOW_MS, this.max, now)
    if (wait > 0) {
      this.fullUntil.set(keyId, now + wait)
      return this.refusal(wait)
    }
    await r.keyHits.record(keyId, now, { max: this.max, windowMs: KEY_WINDOW_MS })
    const last = this.touched.get(keyId)
    if (last === undefined || now - last >= TOUCH_EVERY_MS || now < last) {
      await r.keys.touch(keyId, now)
      this.touched.set(keyId, now)
    }
    return { ok: true }
  }

  /**
   * Drops what this process remembers (windows seen full, last touches): the
   * store calls it when a rollback may have undone what they were read from.
   */
  forget(): void {
    this.fullUntil.clear()
    this.touched.clear()
  }

  /** For a request that ends before its operation: counts it in a transaction of its own. */
  admitAlone(keyId: number): Promise<Admission> {
    return this.storage.write((r) => this.admit(r, keyId))
  }

  private refusal(waitMs: number): Admission {
    return { ok: false, max: this.max, retryAfter: secondsUntil(waitMs) }
  }
}
