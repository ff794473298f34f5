/**
 * One try of a leased delivery (docs/api.md#events): signed afresh (same
 * `webhook-id`, new `webhook-timestamp`), POSTed, and its outcome worked out
 * on the retry schedule, to be recorded while its owner holds the lease.
 */
import type { Clock } from '../lib/clock.ts'
import type { DeliveryResult, DueDelivery } from '../otp/ports/index.ts'
import { ROTATION_OVERLAP_MS, type SecretSealer } from '../otp/webhooks.ts'
import { postEvent, type PostEvent, type PostResult } from './post.ts'
import { nextTry } from './schedule.ts'
import { signedHeaders } from './sign.ts'

export type DeliveryOutcome = 'delivered' | 'retry' | 'failed'

export interface Attempt {
  eventId: string
  outcome: DeliveryOutcome
  result: DeliveryResult
}

export interface AttemptDeps {
  clock: Clock
  sealer: SecretSealer
  post?: PostEvent
  random?: () => number
}

/** One try of `x`, leased by `owner`: its outcome. Never throws. */
export async function tryDelivery(d: AttemptDeps, x: DueDelivery, owner: string): Promise<Attempt> {
  const startedAt = d.clock.now()
  let result: PostResult
  try {
    const secrets = [d.sealer.open(x.secret)]
    if (x.prevSecret !== null && x.rotatedAt !== null && startedAt < x.rotatedAt + ROTATION_OVERLAP_MS) secrets.push(d.sealer.open(x.prevSecret))
    result = await (d.post ?? postEvent)(x.url, signedHeaders(secrets, x.eventId, Math.floor(startedAt / 1000), x.body), x.body)
  } catch (err) {
    // A secret that cannot be opened: a failed try like any other, on the same schedule.
    result = { ok: false, error: err instanceof Error ? err.message : String(err) }
  }
  const at = d.clock.now()
  const attempts = x.attempts + 1
  const next = result.ok ? null : nextTry(attempts, at, x.firstAt, (d.random ?? Math.random)())
  const outcome: DeliveryOutcome = result.ok ? 'delivered' : next === null ? 'failed' : 'retry'
  return {
    eventId: x.eventId,
    outcome,
    result: {
      eventSeq: x.eventSeq,
      endpointId: x.endpointId,
      owner,
      status: outcome === 'retry' ? 'pending' : outcome,
      attempts,
      nextAt: next ?? at,
      error: result.ok ? null : result.error,
      at,
      startedAt,
    },
  }
}
