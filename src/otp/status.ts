/**
 * A verification's status (docs/api.md#verification-status), decided in
 * this order: `canceled`, `failed`, `approved`, `expired`, `locked` (its own
 * lockout, docs/api.md#lockout, or the recipient's 24 h failure cap,
 * docs/api.md#hardening), `pending`. The same rules verify applies, so the
 * status a client reads is what verify would answer: `locked` exactly when
 * verify would answer the lockout 429.
 */
import { recipientCapWait } from './failure-cap.ts'
import type { Repos, VerificationStatus } from './ports/index.ts'
import type { Limits, Verification } from './types.ts'

/** The status at `now`, given whether the recipient's failure cap holds it (pure). */
export function decideStatus(v: Verification, now: number, recipientCapped: boolean): VerificationStatus {
  if (v.status === 'canceled') return 'canceled'
  if (v.status === 'failed') return 'failed'
  if (v.usedAt !== null) return 'approved'
  if (now >= v.expiresAt) return 'expired'
  if ((v.lockedUntil !== null && now < v.lockedUntil) || recipientCapped) return 'locked'
  return 'pending'
}

/** Inside a transaction: the status, reading the recipient's failure log only when it can matter. */
export async function statusOf(r: Repos, v: Verification, limits: Limits, now: number): Promise<VerificationStatus> {
  const status = decideStatus(v, now, false)
  if (status !== 'pending') return status
  return (await recipientCapWait(r, v, limits, now)) > 0 ? 'locked' : 'pending'
}

/** Failed attempts as verify counts them: once a lockout has ended the counter is back to 0 (docs/api.md#verification-states). */
export function failedAttemptsOf(v: Verification, now: number): number {
  return v.lockedUntil !== null && now >= v.lockedUntil ? 0 : v.failedAttempts
}
