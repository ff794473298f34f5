/**
 * The `noop` provider accepts every message and sends nothing. It exists for
 * benchmarks (scripts/bench) and load tests, where delivery must cost nothing;
 * `serve` warns about it like the `log` provider.
 */
import type { OutboundMessage } from '../otp/types.ts'
import type { Provider } from './provider.ts'

export class NoopProvider implements Provider {
  readonly type = 'noop'
  constructor(readonly name: string) {}

  async send(_m: OutboundMessage, _signal?: AbortSignal): Promise<void> {}
}
