/**
 * The `log` provider, for development: each message becomes one line of the
 * server's log, in its format (JSON lines, or text on a terminal), at `info`.
 * The line carries the message text, code included: printing the code is
 * this provider's one job, and the only place a code is ever printed
 * (docs/api.md#errors). Everything else follows the rules of every log line:
 * the recipient is masked. `serve` warns when it is in use.
 */
import { createLogger, type Logger } from '../lib/logger.ts'
import { maskRecipient } from '../lib/mask.ts'
import type { OutboundMessage } from '../otp/types.ts'
import type { Provider } from './provider.ts'

/** The line's message: fixed, so a log search (and the CI scan of test output) finds every one. */
export const LOG_PROVIDER_MSG = '[otpd log provider] message printed, not delivered'

export class LogProvider implements Provider {
  readonly type = 'log'
  constructor(
    readonly name: string,
    /** Absent where providers are built only to be inspected (config check, reload): a stdout logger is made at the first send. */
    private logger?: Logger,
  ) {}

  async send(m: OutboundMessage, _signal?: AbortSignal): Promise<void> {
    this.logger ??= createLogger()
    this.logger.info(LOG_PROVIDER_MSG, {
      provider: this.name,
      channel: m.channel,
      recipient: maskRecipient(m.recipient),
      verification_id: m.verificationId,
      ...(m.channel === 'email' ? { subject: m.subject } : {}),
      text: m.text,
    })
  }
}
