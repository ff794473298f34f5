/**
 * Delivers a message over its channel: the channel's providers are tried in
 * order, all within one time budget (`delivery.timeout_ms`). The operator's
 * log names each provider that failed and why; never the code or recipient.
 */
import type { Logger } from '../lib/logger.ts'
import type { Delivery } from '../otp/ports.ts'
import type { Channel, OutboundMessage } from '../otp/types.ts'
import { RecipientRejectedError, type Provider } from './provider.ts'

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

  async deliver(message: OutboundMessage): Promise<{ provider: string }> {
    const budget = AbortSignal.timeout(this.timeoutMs)
    const failures: string[] = []
    for (const provider of this.providers[message.channel]) {
      if (budget.aborted) break
      const started = performance.now()
      const attempt = (outcome: DeliveryAttempt['outcome']) =>
        this.onAttempt({ channel: message.channel, provider: provider.name, type: provider.type, outcome, ms: performance.now() - started })
      try {
        await raceAbort(provider.send(message, budget), budget)
        attempt('accepted')
        return { provider: provider.name }
      } catch (err) {
        attempt(budget.aborted ? 'timeout' : err instanceof RecipientRejectedError ? 'rejected' : 'failed')
        const reason = budget.aborted ? `timed out after ${this.timeoutMs} ms` : err instanceof Error ? err.message : String(err)
        failures.push(`${provider.name}: ${reason}`)
        this.logger.warn('provider failed', { channel: message.channel, provider: provider.name, type: provider.type, reason })
        if (err instanceof RecipientRejectedError) break
      }
    }
    if (budget.aborted && failures.length < this.providers[message.channel].length) failures.push(`timed out after ${this.timeoutMs} ms`)
    throw new DeliveryFailedError(`all ${message.channel} providers failed (${failures.join('; ')})`)
  }
}

/** A provider that ignores its signal still cannot hold a request past the budget. */
function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error('aborted'))
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}
