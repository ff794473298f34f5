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
import { KEY_CACHE_MS } from '../otp/api-keys.ts'
import { type KeyLimiter, keyLimitedBy } from '../otp/key-limiter.ts'
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

/** `no_account`: the hook's account does not exist; `hook_disabled`: an operator disabled or revoked its key. */
type HookUnavailable = { kind: 'no_account' } | { kind: 'hook_disabled' }

export type HookOutcome = SendOutcome | IdempotencyOutcome | HookUnavailable

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
  private readonly keys = new Map<string, { account: string; key: ApiKey; at: number }>()

  constructor(private readonly d: HookDeliveryDeps) {}

  /** `input`: the send the message asks for, validated by the route. */
  async deliver(plan: HookPlan, message: HookMessage, input: SendInput, requestId: string): Promise<HookOutcome> {
    const key = await this.keyOf(plan)
    if ('kind' in key) return key
    const idem = this.retryScope(plan, key, message)
    const via = { limiter: this.d.limiterFor(plan.name), delivery: this.d.deliveryFor(plan.name) }
    return this.d.send.send(key, { ...input, checkedBy: plan.name, expiresIn: plan.codeLifetimeSeconds }, requestId, idem, via)
  }

  /**
   * A request that ends before its delivery (a payload it cannot read) is
   * counted toward the hook's limit, as a client's 400 is toward its key's:
   * the limit's refusal when it is full, else null.
   */
  async countAlone(plan: HookPlan): Promise<HookOutcome | null> {
    const key = await this.keyOf(plan)
    if ('kind' in key) return key
    return keyLimitedBy(await this.d.limiterFor(plan.name).admitAlone(key.id))
  }

  /** Forgets the keys (an operator changed a key's status). */
  forget(): void {
    this.keys.clear()
  }

  /**
   * The identity server's delivery id where it sends one, else the recipient
   * and the code (or the whole text) under a keyed hash: nothing of either is
   * stored in clear. Held for the code's lifetime.
   */
  private retryScope(plan: HookPlan, key: ApiKey, m: HookMessage): IdempotentRequest<SendOutcome> {
    // With the recipient: one request may mail two addresses under one id (Supabase's secure email change).
    const what = m.deliveryId !== undefined ? `id\n${m.deliveryId}\n${m.recipient}` : `to\n${m.channel}\n${m.recipient}\n${m.code ?? m.text ?? ''}`
    const scopeKey = this.d.hasher.digest(HASH_PURPOSE_HOOK_RETRY, `${plan.name}\n${what}`).toString('hex')
    return {
      scope: { keyId: key.id, method: 'POST', path: `/hooks/${plan.name}`, key: scopeKey },
      // A keyed hash of this is all that is kept (otp/idempotency.ts fingerprint).
      canonicalBody: canonicalJson({ ...m, deliveryId: null }),
      answer: (outcome: SendOutcome): StoredAnswer => ({ status: 200, body: JSON.stringify(outcome) }),
      retentionMs: plan.codeLifetimeSeconds * 1000,
    }
  }

  /**
   * The hook's key on its account, made on its first request; or why the hook
   * cannot send. Trusted for KEY_CACHE_MS, as an API key is: an operator's
   * change from another process (`otpd keys disable`) applies within it.
   */
  private async keyOf(plan: HookPlan): Promise<ApiKey | HookUnavailable> {
    const now = this.d.clock.now()
    const known = this.keys.get(plan.name)
    if (known && known.account === plan.account && now - known.at < KEY_CACHE_MS && now >= known.at) return known.key
    // A read finds it nearly always; a write only adds or moves it.
    const { account, found } = await this.d.storage.read(async (r) => ({
      account: await r.admin.findAccount(plan.account),
      found: await r.hookKeys.find(plan.name),
    }))
    const ready = account !== undefined && found !== undefined && found.accountId === account.id && found.status === 'active'
    const key = ready ? this.keyFrom(found) : await this.addOrMove(plan, now)
    if ('kind' in key) this.keys.delete(plan.name)
    else this.keys.set(plan.name, { account: plan.account, key, at: now })
    return key
  }

  /** In a write: the hook's key added on its account, or moved to it. */
  private addOrMove(plan: HookPlan, now: number): Promise<ApiKey | HookUnavailable> {
    return this.d.storage.write(async (r): Promise<ApiKey | HookUnavailable> => {
      const account = await r.admin.findAccount(plan.account)
      if (!account) return { kind: 'no_account' }
      const found = await r.hookKeys.find(plan.name)
      if (found) {
        if (found.status !== 'active') return { kind: 'hook_disabled' }
        if (found.accountId !== account.id) await r.hookKeys.moveTo(found.id, account.id)
        return this.keyFrom({ ...found, accountId: account.id })
      }
      // No presented key hashes to this (a key's hash is hex): the key has no secret.
      const keyHash = `hook:${this.d.hasher.digest(HASH_PURPOSE_HOOK_KEY, randomBase62(24)).toString('base64url')}`
      return this.keyFrom({ id: await r.hookKeys.insert({ hook: plan.name, accountId: account.id, keyHash, at: now }), accountId: account.id })
    })
  }

  private keyFrom(k: { id: number; accountId: number }): ApiKey {
    return { id: k.id, accountId: k.accountId, prefix: 'hook', status: 'active' }
  }
}

/** A stored answer of a hook's first request, as the outcome it was. */
export function storedOutcome(answer: StoredAnswer): SendOutcome {
  return JSON.parse(answer.body) as SendOutcome
}
