/**
 * The `log` provider, for development: it prints the whole message (code
 * included) to the server's output. It is the only place a code is ever
 * printed (docs/api.md#errors), and `serve` warns when it is in use.
 */
import type { OutboundMessage } from '../otp/types.ts'
import type { Provider } from './provider.ts'

export class LogProvider implements Provider {
  readonly type = 'log'
  constructor(
    readonly name: string,
    private readonly write: (line: string) => void = (line) => process.stdout.write(line + '\n'),
  ) {}

  async send(m: OutboundMessage, _signal?: AbortSignal): Promise<void> {
    const subject = m.channel === 'email' ? ` subject=${JSON.stringify(m.subject)}` : ''
    this.write(`[otpd log provider] ${m.channel} to ${m.recipient}${subject} verification=${m.verificationId}: ${JSON.stringify(m.text)}`)
  }
}
