/**
 * Cancel (docs/api.md#verification-status): a pending or locked verification is taken
 * out of use as `canceled` (verify then answers 404, as for a failed
 * delivery). Canceling a canceled one answers the same (idempotent);
 * approved, expired and failed ones cannot be canceled. The credit is not
 * refunded: the code was delivered.
 *
 * One transaction decides the per-key limit, the Idempotency-Key, the status
 * and the change, and writes the `verification.canceled` event with it.
 */
import type { Clock } from '../lib/clock.ts'
import type { VerificationIds } from '../lib/verification-id.ts'
import type { Idempotency, IdempotencyOutcome, IdempotentRequest } from './idempotency.ts'
import type { KeyLimiter } from './key-limiter.ts'
import type { Storage } from './ports/index.ts'
import { statusOf } from './status.ts'
import type { ApiKey, Limits } from './types.ts'

export type CancelOutcome =
  | { kind: 'key_limited'; max: number; retryAfter: number }
  | { kind: 'not_found' }
  | { kind: 'canceled'; verificationId: string }
  /** It ended otherwise first. */
  | { kind: 'final'; status: 'approved' | 'expired' | 'failed' }

export interface CancelDeps {
  storage: Storage
  ids: VerificationIds
  clock: Clock
  limits: Limits
  limiter: KeyLimiter
  idempotency: Idempotency
}

export class CancelService {
  constructor(private readonly d: CancelDeps) {}

  cancel(key: ApiKey, id: string, idem?: IdempotentRequest<CancelOutcome>): Promise<CancelOutcome | IdempotencyOutcome> {
    const { d } = this
    return d.storage.write(async (r) => {
      const admission = await d.limiter.admit(r, key.id)
      if (!admission.ok) return { kind: 'key_limited', max: admission.max, retryAfter: admission.retryAfter } as const
      const now = d.clock.now()
      return d.idempotency.once(r, idem, now, async (): Promise<CancelOutcome> => {
        const v = await r.verifications.findForKey(id, d.ids.seqOf(id), key.id)
        if (!v) return { kind: 'not_found' }
        const status = await statusOf(r, v, d.limits, now)
        if (status === 'canceled') return { kind: 'canceled', verificationId: v.id }
        if (status === 'approved' || status === 'expired' || status === 'failed') return { kind: 'final', status }
        await r.verifications.cancel(v.seq)
        await r.events.add({
          type: 'verification.canceled',
          accountId: v.accountId,
          at: now,
          verification: { ...v, status: 'canceled' },
          status: 'canceled',
          extra: {},
        })
        return { kind: 'canceled', verificationId: v.id }
      })
    })
  }
}
