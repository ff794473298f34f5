/**
 * A verification's status (docs/api.md#verification-status), decided in
 * this order: `canceled`, `failed`, `approved`, `expired`, `locked` (its own
 * lockout, docs/api.md#lockout, or the recipient's 24 h failure cap,
 * docs/api.md#hardening), `pending`. The same rules verify applies, so the
 * status a client reads is what verify would answer: `locked` exactly when
 * verify would answer the lockout 429. Reading it is not an attempt: nothing
 * of the verification changes, but the request counts toward the per-key
 * limit, decided in the same transaction as the read.
 */
import { recipientCapWait } from './failure-cap.ts'
import { type KeyedDeps, type KeyLimited, keyLimitedBy } from './key-limiter.ts'
import type { Repos, StepRow, VerificationStatus } from './ports/index.ts'
import type { ApiKey, Limits, Verification } from './types.ts'

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

export type StatusOutcome =
  | KeyLimited
  | { kind: 'not_found' }
  /** `steps`: a workflow's (docs/api.md#workflows), in order; empty for a send without one. */
  | { kind: 'found'; verification: Verification; status: VerificationStatus; failedAttempts: number; steps: StepRow[] }

export type StatusDeps = KeyedDeps

export class StatusService {
  constructor(private readonly d: StatusDeps) {}

  /** The verification `id` of this key, as it stands now; another key's is not found. */
  status(key: ApiKey, id: string): Promise<StatusOutcome> {
    const { d } = this
    return d.storage.write(async (r): Promise<StatusOutcome> => {
      const limited = keyLimitedBy(await d.limiter.admit(r, key.id))
      if (limited) return limited
      const now = d.clock.now()
      const v = await r.verifications.findForKey(id, d.ids.seqOf(id), key.id)
      if (!v) return { kind: 'not_found' }
      const [status, steps] = await Promise.all([statusOf(r, v, d.limits, now), r.workflows.steps(v.seq)])
      return { kind: 'found', verification: v, status, failedAttempts: failedAttemptsOf(v, now), steps }
    })
  }
}
