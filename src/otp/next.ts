/**
 * `/next` (docs/api.md#workflows): the client asks for a workflow's next
 * step now. One transaction decides the per-key limit, the Idempotency-Key,
 * the verification's status and the step (otp/fallback.ts); the delivery
 * follows it, and the answer waits for it. A replay delivers nothing again.
 */
import type { Advance, Fallback } from './fallback.ts'
import type { Idempotency, IdempotencyOutcome, IdempotentRequest } from './idempotency.ts'
import { type KeyedDeps, type KeyLimited, keyLimitedBy } from './key-limiter.ts'
import type { ApiKey, Channel } from './types.ts'

export type NextOutcome =
  | KeyLimited
  | { kind: 'not_found' }
  /** `advance`: what this request started (absent in what an Idempotency-Key stores). */
  | { kind: 'started'; verificationId: string; step: number; channel: Channel; advance?: Extract<Advance, { kind: 'started' }> }
  /** No later step can start (none is left, or a plain send). */
  | { kind: 'no_next' }
  /** It no longer advances. */
  | { kind: 'final'; status: string }

export interface NextDeps extends KeyedDeps {
  idempotency: Idempotency
  fallback: Fallback
}

export class NextService {
  constructor(private readonly d: NextDeps) {}

  async next(key: ApiKey, id: string, idem?: IdempotentRequest<NextOutcome>): Promise<NextOutcome | IdempotencyOutcome> {
    const { d } = this
    const outcome = await d.storage.write(async (r) => {
      const limited = keyLimitedBy(await d.limiter.admit(r, key.id))
      if (limited) return limited
      return d.idempotency.once(r, idem, d.clock.now(), async (): Promise<NextOutcome> => {
        const v = await r.verifications.findForKey(id, d.ids.seqOf(id), key.id)
        if (!v) return { kind: 'not_found' }
        const moved = await d.fallback.requested(r, v)
        if (moved.kind === 'over') return { kind: 'final', status: moved.status }
        if (moved.kind !== 'started') return { kind: 'no_next' }
        return { kind: 'started', verificationId: v.id, step: moved.step, channel: moved.v.channel, advance: moved }
      })
    })
    if (outcome.kind === 'started' && outcome.advance) await d.fallback.deliver(outcome.advance, { idempotent: false })
    return outcome
  }
}
