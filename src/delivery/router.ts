/**
 * Delivers a message over its channel: the channel's providers are tried in
 * order, all within one time budget (`delivery.timeout_ms`); each provider may
 * use an equal share of what is left of it, so a hanging provider cannot stop
 * the next one from being tried. The operator's
 * log names each provider that failed and why; never the code or recipient.
 */
import type { Logger } from '../lib/logger.ts'
import type { Delivery } from '../otp/ports/index.ts'
import type { Channel, OutboundMessage } from '../otp/types.ts'
import { ProviderMisconfiguredError, RecipientRejectedError, type Provider } from './provider.ts'

export class DeliveryFailedError extends Error {}

/** One provider attempt, for metrics: which provider, how it ended, how long it took. */
export interface DeliveryAttempt {
  channel: Channel
  provider: string
  type: string
  outcome: 'accepted' | 'failed' | 'rejected' | 'timeout'
  ms: number
}

export class ChannelRouter implements Delivery {
  constructor(
    private readonly providers: Record<Channel, Provider[]>,
    private readonly timeoutMs: number,
    private readonly logger: Logger,
    private readonly onAttempt: (a: DeliveryAttempt) => void = () => {},
  ) {}

  providersFor(channel: Channel): readonly Provider[] {
    return this.providers[channel]
  }

  async deliver(message: OutboundMessage): Promise<{ provider: string; ref?: string; language?: string }> {
    const providers = this.providers[message.channel]
    const deadline = performance.now() + this.timeoutMs
    const failures: string[] = []
    for (const [i, provider] of providers.entries()) {
      const left = deadline - performance.now()
      if (left <= 0) break
      // Each provider may use an equal share of what is left, so one that hangs
      // cannot starve the ones after it; the last one gets all that remains.
      const share = Math.max(1, Math.floor(left / (providers.length - i)))
      const controller = new AbortController()
      const signal = controller.signal
      const started = performance.now()
      const attempt = (outcome: DeliveryAttempt['outcome']) =>
        this.onAttempt({ channel: message.channel, provider: provider.name, type: provider.type, outcome, ms: performance.now() - started })
      try {
        const accepted = await withTimeout(provider.send(message, signal), controller, share)
        attempt('accepted')
        return accepted ? { provider: provider.name, ...accepted } : { provider: provider.name }
      } catch (err) {
        attempt(signal.aborted ? 'timeout' : err instanceof RecipientRejectedError ? 'rejected' : 'failed')
        const reason = signal.aborted ? `timed out after ${share} ms` : err instanceof Error ? err.message : String(err)
        failures.push(`${provider.name}: ${reason}`)
        const fields = { channel: message.channel, provider: provider.name, type: provider.type, reason }
        // A wrong setting is the operator's to fix, not a vendor's hiccup: an error line naming it (docs/delivery.md#whatsapp-errors).
        if (err instanceof ProviderMisconfiguredError) this.logger.error(`provider misconfigured: ${provider.name}`, { ...fields, setting: err.setting })
        else this.logger.warn(`provider failed: ${provider.name}`, fields)
        if (err instanceof RecipientRejectedError) {
          if (i < providers.length - 1) failures.push('the recipient was rejected, so no other provider was tried')
          break
        }
      }
    }
    if (failures.length === 0) failures.push(`no time left of ${this.timeoutMs} ms`)
    throw new DeliveryFailedError(`all ${message.channel} providers failed (${failures.join('; ')})`)
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
