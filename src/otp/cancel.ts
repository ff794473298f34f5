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
import type { Idempotency, IdempotencyOutcome, IdempotentRequest } from './idempotency.ts'
import { type KeyedDeps, type KeyLimited, keyLimitedBy } from './key-limiter.ts'
import { statusOf } from './status.ts'
import type { ApiKey } from './types.ts'

export type CancelOutcome =
  | KeyLimited
  | { kind: 'not_found' }
  | { kind: 'canceled'; verificationId: string }
  /** It ended otherwise first. */
  | { kind: 'final'; status: 'approved' | 'expired' | 'failed' }

export interface CancelDeps extends KeyedDeps {
  idempotency: Idempotency
}

export class CancelService {
  constructor(private readonly d: CancelDeps) {}

  cancel(key: ApiKey, id: string, idem?: IdempotentRequest<CancelOutcome>): Promise<CancelOutcome | IdempotencyOutcome> {
    const { d } = this
    return d.storage.write(async (r) => {
      const limited = keyLimitedBy(await d.limiter.admit(r, key.id))
      if (limited) return limited
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
