/**
 * The per-recipient failure cap (docs/api.md#hardening): wrong codes are
 * counted per recipient hash (keyed by account) across all of its
 * verifications, and once `limits.recipientFailuresPerDay` of them fall in a
 * rolling 24 hours, verify answers the lockout for every verification of the
 * recipient and send refuses new codes for it, until the window has room.
 *
 * The cap spares test recipients (docs/api.md#test-recipients): every key of
 * the account shares them, and one team's test suite must not lock out
 * another's.
 */
import type { Repos } from './ports/index.ts'
import type { Limits, Verification } from './types.ts'
import { waitForRoomInLog, waitWhileInWindow } from './windows.ts'

/** The window of the per-recipient failure cap. */
export const FAILURE_WINDOW_MS = 86_400_000

/**
 * Inside a transaction: ms until the failure cap of `recipientHash` has room
 * again; 0 when it has room now. One look-up of the failure log (its n-th
 * latest entry), under the recipient's lock on engines that take one.
 */
export function failureCapWait(r: Repos, recipientHash: Uint8Array, limits: Limits, now: number): Promise<number> {
  return waitForRoomInLog(r.failures, recipientHash, FAILURE_WINDOW_MS, limits.recipientFailuresPerDay, now)
}

/** A verification's recipient cap as read once: its wait now, and once a failure at `at` is recorded. */
export interface RecipientCap {
  wait: number
  afterFailure(at: number): number
}

const NO_CAP: RecipientCap = { wait: 0, afterFailure: () => 0 }

/**
 * Inside a transaction, for verify: the recipient's cap now and after this
 * attempt's failure, from one look-up (the failure log's n-th and (n-1)-th
 * latest entries). Exact: the recipient's failures change only under its
 * lock (or SQLite's single writer), which the look-up holds until COMMIT.
 * Always 0 for a test recipient.
 */
export async function recipientCap(r: Repos, v: Verification, limits: Limits, now: number): Promise<RecipientCap> {
  if (v.testMode !== null) return NO_CAP
  const n = limits.recipientFailuresPerDay
  const { nth, previous } = await r.failures.nthLatestPair(v.recipientHash, n)
  return {
    wait: waitWhileInWindow(nth, FAILURE_WINDOW_MS, now),
    afterFailure: (at) => waitWhileInWindow(nthAfter(n, nth, previous, at), FAILURE_WINDOW_MS, now),
  }
}

/** The n-th latest time once `at` joins a log whose n-th and (n-1)-th latest are `nth` and `previous` (undefined: it has fewer). */
export function nthAfter(n: number, nth: number | undefined, previous: number | undefined, at: number): number | undefined {
  // n = 1: the newest of the two.
  if (n === 1) return nth === undefined || at >= nth ? at : nth
  // Fewer than n - 1 before: fewer than n after.
  if (previous === undefined) return undefined
  if (at >= previous) return previous
  return nth === undefined || at >= nth ? at : nth
}

/** As failureCapWait, for a verification's recipient: always 0 for a test recipient. */
export async function recipientCapWait(r: Repos, v: Verification, limits: Limits, now: number): Promise<number> {
  if (v.testMode !== null) return 0
  return failureCapWait(r, v.recipientHash, limits, now)
}
