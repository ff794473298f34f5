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
import { waitForRoomInLog } from './windows.ts'

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

/** As failureCapWait, for a verification's recipient: always 0 for a test recipient. */
export async function recipientCapWait(r: Repos, v: Verification, limits: Limits, now: number): Promise<number> {
  if (v.testMode !== null) return 0
  return failureCapWait(r, v.recipientHash, limits, now)
}
