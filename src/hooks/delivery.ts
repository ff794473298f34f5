/**
 * A hook's request once authenticated and read (docs/integrations.md#what-otpd-records):
 * a send of the hook's account under the hook's key, whose code the identity
 * server checks (`checked_by`), with the hook's own request limit, and with a
 * retry of the same delivery answered from the first (otp/idempotency.ts) instead
 * of delivered or charged again.
 */
import { canonicalJson } from '../lib/canonical-json.ts'
import type { Clock } from '../lib/clock.ts'
import { randomBase62 } from '../lib/random.ts'
import type { Hasher } from '../lib/secrets.ts'
import type { IdempotencyOutcome, IdempotentRequest } from '../otp/idempotency.ts'
import type { KeyLimiter } from '../otp/key-limiter.ts'
import type { Delivery, Storage, StoredAnswer } from '../otp/ports/index.ts'
import type { SendOutcome, SendService } from '../otp/send.ts'
import type { ApiKey, SendInput } from '../otp/types.ts'
import type { HookMessage } from './adapter.ts'

export const HASH_PURPOSE_HOOK_RETRY = 'hook-retry'
export const HASH_PURPOSE_HOOK_KEY = 'hook-key'

/** What a delivery needs of a `[hooks.NAME]` table. */
export interface HookPlan {
  name: string
  account: string
  codeLifetimeSeconds: number
}

export type HookOutcome = SendOutcome | IdempotencyOutcome | { kind: 'no_account' }

export interface HookDeliveryDeps {
  storage: Storage
  hasher: Hasher
  clock: Clock
  send: SendService
  /** The hook's own request limit (app/hooks.ts). */
  limiterFor(hook: string): KeyLimiter
  /** The providers of the hook's `channels`, when it names any. */
  deliveryFor(hook: string): Delivery | undefined
}

export class HookDeliveries {
  /** hook -> its key, for the account it was last resolved for. */
  private readonly keys = new Map<string, { account: string; key: ApiKey }>()

  constructor(private readonly d: HookDeliveryDeps) {}

  /** `input`: the send the message asks for, validated by the route. */
  async deliver(plan: HookPlan, message: HookMessage, input: SendInput, requestId: string): Promise<HookOutcome> {
    const key = await this.keyOf(plan)
    if (key === null) return { kind: 'no_account' }
    const idem = this.retryScope(plan, key, message)
    const via = { limiter: this.d.limiterFor(plan.name), delivery: this.d.deliveryFor(plan.name) }
    return this.d.send.send(key, { ...input, checkedBy: plan.name, expiresIn: plan.codeLifetimeSeconds }, requestId, idem, via)
  }

  /** Forgets the keys (the config changed). */
  forget(): void {
    this.keys.clear()
  }

  /**
   * The identity server's delivery id where it sends one, else the recipient
   * and the code (or the whole text) under a keyed hash: nothing of either is
   * stored in clear. Held for the code's lifetime.
   */
  private retryScope(plan: HookPlan, key: ApiKey, m: HookMessage): IdempotentRequest<SendOutcome> {
    const what = m.deliveryId !== undefined ? `id\n${m.deliveryId}` : `to\n${m.channel}\n${m.recipient}\n${m.code ?? m.text ?? ''}`
    const scopeKey = this.d.hasher.digest(HASH_PURPOSE_HOOK_RETRY, `${plan.name}\n${what}`).toString('hex')
    return {
      scope: { keyId: key.id, method: 'POST', path: `/hooks/${plan.name}`, key: scopeKey },
      // A keyed hash of this is all that is kept (otp/idempotency.ts fingerprint).
      canonicalBody: canonicalJson({ ...m, deliveryId: null }),
      answer: (outcome: SendOutcome): StoredAnswer => ({ status: 200, body: JSON.stringify(outcome) }),
      retentionMs: plan.codeLifetimeSeconds * 1000,
    }
  }

  /** The hook's key on its account, made on its first request; null when the account does not exist. */
  private async keyOf(plan: HookPlan): Promise<ApiKey | null> {
    const known = this.keys.get(plan.name)
    if (known && known.account === plan.account) return known.key
    const key = await this.d.storage.write(async (r): Promise<ApiKey | null> => {
      const account = await r.admin.findAccount(plan.account)
      if (!account) return null
      const found = await r.hookKeys.find(plan.name)
      if (found) {
        if (found.accountId !== account.id) await r.hookKeys.moveTo(found.id, account.id)
        return { id: found.id, accountId: account.id, prefix: 'hook', status: 'active' }
      }
      // No presented key hashes to this (a key's hash is hex): the key has no secret.
      const keyHash = `hook:${this.d.hasher.digest(HASH_PURPOSE_HOOK_KEY, randomBase62(24)).toString('base64url')}`
      const id = await r.hookKeys.insert({ hook: plan.name, accountId: account.id, keyHash, at: this.d.clock.now() })
      return { id, accountId: account.id, prefix: 'hook', status: 'active' }
    })
    if (key) this.keys.set(plan.name, { account: plan.account, key })
    return key
  }
}

/** A stored answer of a hook's first request, as the outcome it was. */
export function storedOutcome(answer: StoredAnswer): SendOutcome {
  return JSON.parse(answer.body) as SendOutcome
}
