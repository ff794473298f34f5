/**
 * Reading a verification's status (docs/api.md#verification-status). Not an attempt:
 * nothing of the verification changes. It is an authenticated request, so it
 * counts toward the per-key limit, decided and counted in the same
 * transaction as the read (as send and verify do).
 */
import { type KeyedDeps, type KeyLimited, keyLimitedBy } from './key-limiter.ts'
import type { VerificationStatus } from './ports/index.ts'
import { failedAttemptsOf, statusOf } from './status.ts'
import type { ApiKey, Verification } from './types.ts'

export type ShowOutcome = KeyLimited | { kind: 'not_found' } | { kind: 'found'; verification: Verification; status: VerificationStatus; failedAttempts: number }

export type ShowDeps = KeyedDeps

export class ShowService {
  constructor(private readonly d: ShowDeps) {}

  /** The verification `id` of this key, as it stands now; another key's is not found. */
  show(key: ApiKey, id: string): Promise<ShowOutcome> {
    const { d } = this
    return d.storage.write(async (r): Promise<ShowOutcome> => {
      const limited = keyLimitedBy(await d.limiter.admit(r, key.id))
      if (limited) return limited
      const now = d.clock.now()
      const v = await r.verifications.findForKey(id, d.ids.seqOf(id), key.id)
      if (!v) return { kind: 'not_found' }
      return { kind: 'found', verification: v, status: await statusOf(r, v, d.limits, now), failedAttempts: failedAttemptsOf(v, now) }
    })
  }
}
