/**
 * Delivers a message over its channel: the channel's providers are tried in
 * order, all within one time budget (`delivery.timeout_ms`). Each attempt may
 * use its provider's `timeout_ms`, and never more than an equal share of what
 * is left of the budget, so a hanging provider cannot stop the next one from
 * being tried; its wait for one of the provider's slots counts in that time.
 * A provider whose circuit is open is skipped (provider-guard.ts,
 * docs/delivery.md#slow-providers). The operator's log names each provider
 * that failed and why; never the code or recipient.
 */
import type { Logger } from '../lib/logger.ts'
import type { Delivery, DeliveryFailure } from '../otp/ports/index.ts'
import type { Channel, OutboundMessage } from '../otp/types.ts'
import { DEFAULT_MAX_IN_FLIGHT } from './guard-settings.ts'
import type { Pass, ProviderGuard } from './provider-guard.ts'
import { ProviderGuards } from './provider-guards.ts'
import { type Accepted, ProviderMisconfiguredError, RecipientRejectedError, type Provider } from './provider.ts'

export class DeliveryFailedError extends Error implements DeliveryFailure {
  constructor(
    message: string,
    /** The last provider that timed out after its request went out: it may still deliver. */
    readonly mayStillDeliver: string | null,
  ) {
    super(message)
  }
}

/**
 * One provider attempt, for metrics: which provider, how it ended, how long it took.
 * `busy`: no slot freed in time; `circuit_open`: skipped; neither sent anything.
 */
export interface DeliveryAttempt {
  channel: Channel
  provider: string
  type: string
  outcome: 'accepted' | 'failed' | 'rejected' | 'timeout' | 'busy' | 'circuit_open'
  ms: number
}

/** How one attempt ended, as the loop needs it. */
type Tried = { ok: true; accepted: Accepted | undefined } | { ok: false; reason: string; rejected: boolean; mayStillDeliver: boolean; setting?: string }

export class ChannelRouter implements Delivery {
  constructor(
    private readonly providers: Record<Channel, Provider[]>,
    private readonly timeoutMs: number,
    private readonly logger: Logger,
    private readonly onAttempt: (a: DeliveryAttempt) => void = () => {},
    /** The providers' slots and circuits; by default each provider has the default slots and `timeoutMs`. */
    private readonly guards: ProviderGuards = new ProviderGuards(
      () => ({ maxInFlight: DEFAULT_MAX_IN_FLIGHT, timeoutMs, circuitFailures: 5, coolDownMs: 30_000 }),
      Date.now,
      logger,
    ),
  ) {}

  providersFor(channel: Channel): readonly Provider[] {
    return this.providers[channel]
  }

  async deliver(message: OutboundMessage): Promise<{ provider: string; ref?: string; language?: string }> {
    const providers = this.providers[message.channel]
    const deadline = performance.now() + this.timeoutMs
    const failures: string[] = []
    let mayStillDeliver: string | null = null
    for (const [i, provider] of providers.entries()) {
      const left = deadline - performance.now()
      if (left <= 0) break
      const guard = this.guards.of(provider.name)
      // An equal share of what is left, so one that hangs cannot starve the
      // ones after it (the last one gets all that remains); at most its own timeout.
      const limit = Math.max(1, Math.min(guard.settings.timeoutMs, Math.floor(left / (providers.length - i))))
      const tried = await this.attempt(provider, guard, message, limit)
      if (tried.ok) return { provider: provider.name, ...tried.accepted }
      failures.push(`${provider.name}: ${tried.reason}`)
      if (tried.mayStillDeliver) mayStillDeliver = provider.name
      const fields = {
        channel: message.channel,
        provider: provider.name,
        type: provider.type,
        reason: tried.reason,
        ...(tried.mayStillDeliver ? { may_still_deliver: true } : {}),
      }
      // A wrong setting is the operator's to fix, not a vendor's hiccup: an error line naming it (docs/delivery.md#whatsapp-errors).
      if (tried.setting !== undefined) this.logger.error(`provider misconfigured: ${provider.name}`, { ...fields, setting: tried.setting })
      else this.logger.warn(`provider failed: ${provider.name}`, fields)
      if (tried.rejected) {
        if (i < providers.length - 1) failures.push('the recipient was rejected, so no other provider was tried')
        break
      }
    }
    if (failures.length === 0) failures.push(`no time left of ${this.timeoutMs} ms`)
    throw new DeliveryFailedError(`all ${message.channel} providers failed (${failures.join('; ')})`, mayStillDeliver)
  }

  /** One provider's turn: its circuit, a slot within `limit` ms, then the request in what is left of it. */
  private async attempt(provider: Provider, guard: ProviderGuard, message: OutboundMessage, limit: number): Promise<Tried> {
    const started = performance.now()
    const report = (outcome: DeliveryAttempt['outcome']) =>
      this.onAttempt({ channel: message.channel, provider: provider.name, type: provider.type, outcome, ms: performance.now() - started })
    const pass: Pass = guard.admit()
    if (pass === 'skip') {
      report('circuit_open')
      return { ok: false, reason: 'skipped: its circuit is open', rejected: false, mayStillDeliver: false }
    }
    const release = await guard.slot(limit)
    if (!release) {
      if (pass === 'probe') guard.abandonProbe()
      report('busy')
      return { ok: false, reason: `no free slot within ${limit} ms (max_in_flight ${guard.settings.maxInFlight})`, rejected: false, mayStillDeliver: false }
    }
    const share = Math.max(1, limit - Math.floor(performance.now() - started))
    const controller = new AbortController()
    // biome-ignore lint/suspicious/noConfusingVoidType: most providers have nothing to say and simply return.
    let work: Promise<void | Accepted>
    try {
      work = provider.send(message, controller.signal)
    } catch (err) {
      work = Promise.reject(err)
    }
    // The slot is the request's until it really ends, even past its timeout.
    work.then(release, release)
    try {
      const accepted = await withTimeout(work, controller, share)
      guard.record(true, pass === 'probe')
      report('accepted')
      return { ok: true, accepted: accepted || undefined }
    } catch (err) {
      const timedOut = controller.signal.aborted
      const rejected = !timedOut && err instanceof RecipientRejectedError
      // A rejected recipient is an answer: the provider works.
      guard.record(rejected, pass === 'probe')
      report(timedOut ? 'timeout' : rejected ? 'rejected' : 'failed')
      const reason = timedOut ? `timed out after ${share} ms` : err instanceof Error ? err.message : String(err)
      const setting = err instanceof ProviderMisconfiguredError ? err.setting : undefined
      return { ok: false, reason, rejected, mayStillDeliver: timedOut, ...(setting === undefined ? {} : { setting }) }
    }
  }
}

/**
 * Aborts `controller` after `ms` and settles with an error then, so a provider
 * that ignores its signal still cannot hold a request past its share. The
 * timer is cleared as soon as the work settles (AbortSignal.timeout's timer
 * and listener stayed behind for the whole timeout on every request).
 */
function withTimeout<T>(work: Promise<T>, controller: AbortController, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      controller.abort(new DOMException('The operation timed out.', 'TimeoutError'))
      reject(new Error('aborted'))
    }, ms)
    work.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (err) => {
        clearTimeout(timer)
        reject(err)
      },
    )
  })
}
