/**
 * Verify: the verification state machine (docs/api.md#verify-a-code,
 * #order-of-checks, #verification-states, #hardening). Every read and write
 * of one attempt happens in one transaction, so concurrent attempts on one
 * code see each other; the per-key limit is decided and counted in the same
 * transaction.
 */
import type { Hasher } from '../lib/secrets.ts'
import { emit } from './events.ts'
import type { Idempotency, IdempotencyOutcome, IdempotentRequest } from './idempotency.ts'
import { type KeyedDeps, type KeyLimited, keyLimitedBy } from './key-limiter.ts'
import type { Repos } from './ports/index.ts'
import { HASH_PURPOSE_CODE } from './send.ts'
import { recipientCap } from './failure-cap.ts'
import type { ApiKey, Channel, Verification, VerifyInput } from './types.ts'
import { secondsUntil } from './windows.ts'

export type VerifyOutcome =
  | KeyLimited
  /** `step`: the workflow's step current at approval (docs/api.md#workflows), null for a send without one or a test recipient's. */
  | { kind: 'verified'; step: { step: number; channel: Channel } | null }
  | { kind: 'invalid_code' }
  | { kind: 'expired' }
  | { kind: 'already_used' }
  | { kind: 'not_found' }
  /** `attempts`: this verification's own lockout; `recipient_failures`: the 24 h cap across the recipient's verifications. */
  | { kind: 'locked'; retryAfter: number; cause: 'attempts' | 'recipient_failures' }

export interface VerifyDeps extends KeyedDeps {
  hasher: Hasher
  idempotency: Idempotency
}

/** A verify is short and its client waits: its write goes before a queue of sends' writes (store/sqlite/storage.ts). */
const FIRST = { first: true }

export class VerifyService {
  constructor(private readonly d: VerifyDeps) {}

  verify(key: ApiKey, input: VerifyInput, idem?: IdempotentRequest<VerifyOutcome>): Promise<VerifyOutcome | IdempotencyOutcome> {
    const { d } = this
    return d.storage.write(async (r) => {
      // Without an Idempotency-Key the verification is read with the key's
      // window (one round trip on PostgreSQL; its row lock comes first in the
      // lock order), and used only once the key lets the request through. A
      // key known to be full is refused before this (http/admission.ts, the
      // limiter's peek), so a refusal here takes that lock only once.
      const [admission, found] = await Promise.all([d.limiter.admit(r, key.id), idem ? undefined : this.find(r, key, input)])
      const limited = keyLimitedBy(admission)
      if (limited) return limited
      const now = d.clock.now()
      // With an Idempotency-Key, a repeated request answers what the first one did: no second attempt.
      return d.idempotency.once(r, idem, now, async () => this.attempt(r, input, now, found ?? (await this.find(r, key, input))))
    }, FIRST)
  }

  private async find(r: Repos, key: ApiKey, input: VerifyInput): Promise<{ v: Verification | undefined }> {
    return { v: await r.verifications.findForKey(input.verificationId, this.d.ids.seqOf(input.verificationId), key.id) }
  }

  private async attempt(r: Repos, input: VerifyInput, now: number, { v }: { v: Verification | undefined }): Promise<VerifyOutcome> {
    const { d } = this
    // A failed delivery or a canceled verification is out of use.
    // A hook's delivery is checked by its identity server, never here (docs/integrations.md#what-otpd-records).
    if (v?.status !== 'active' || v.checkedBy !== undefined) return { kind: 'not_found' }
    // A test verification of an account whose test recipients are off is out of use too,
    // also one made before the switch: its known code must not pass for a production account.
    if (v.testMode !== null && !(await r.fraud.accountSettings(v.accountId)).testRecipients) return { kind: 'not_found' }
    if (v.usedAt !== null) return { kind: 'already_used' }
    if (now >= v.expiresAt) return { kind: 'expired' }

    let attempts = v.failedAttempts
    if (v.lockedUntil !== null) {
      if (now < v.lockedUntil) return { kind: 'locked', retryAfter: secondsUntil(v.lockedUntil - now), cause: 'attempts' }
      attempts = 0 // the lock has ended: the counter starts again
      await r.verifications.setAttempts(v.seq, 0, null)
    }
    // An attempt past the cap writes an event, right or wrong: its numbering is
    // read with the cap's look-up (for nothing only when the cap refuses).
    r.events.prepare(v)
    const correct = v.testMode !== 'fail' && d.hasher.matches(HASH_PURPOSE_CODE, `${v.id}:${input.code}`, v.codeHash)
    // The step an approval counts at (metrics), read beside the cap's look-up: on PostgreSQL no round trip of its own.
    const step = correct && v.testMode === null ? r.workflows.currentStep(v.seq) : null
    step?.catch(() => undefined)
    const cap = await recipientCap(r, v, d.limits, now)
    if (cap.wait > 0) return { kind: 'locked', retryAfter: secondsUntil(cap.wait), cause: 'recipient_failures' }

    if (correct) {
      await r.verifications.markUsed(v.seq, now)
      // The fraud guard's conversion and proven countries (real sms/voice sends only have a row there).
      if (v.testMode === null && v.channel !== 'email') await r.fraud.approved(v.seq, now)
      await emit(r, 'verification.approved', { ...v, usedAt: now, failedAttempts: 0, lockedUntil: null }, now)
      return { kind: 'verified', step: await step }
    }
    attempts += 1
    const lockedUntil = attempts >= d.limits.maxFailedAttempts ? now + d.limits.lockoutSeconds * 1000 : null
    await r.verifications.setAttempts(v.seq, attempts, lockedUntil)
    // Failures per recipient hash (keyed by account), across verifications: the 24 h cap,
    // which spares test recipients (docs/api.md#test-recipients).
    if (v.testMode === null) await r.failures.record(v.recipientHash, now)
    const after = { ...v, failedAttempts: attempts, lockedUntil }
    // This failure may fill the recipient's cap: a lockout that starts now too,
    // and the status the events report is then `locked`. Known from the
    // look-up above (nothing else changes the recipient's failures meanwhile).
    const capNow = cap.afterFailure(now)
    const status = lockedUntil !== null || capNow > 0 ? 'locked' : 'pending'
    await emit(r, 'verification.attempt_failed', after, now, { failed_attempts: attempts }, status)
    if (status === 'locked') {
      // Until verify takes a code again: the longer of the two locks.
      const retryAfter = Math.max(lockedUntil === null ? 0 : d.limits.lockoutSeconds, capNow > 0 ? secondsUntil(capNow) : 0)
      await emit(r, 'verification.locked', after, now, { retry_after: retryAfter }, status)
    }
    return { kind: 'invalid_code' }
  }
}
