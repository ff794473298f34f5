/** What every delivery provider implements; one file per provider type beside this one. */
import type { OutboundMessage } from '../otp/types.ts'

export interface Provider {
  /** The provider's name in the config (`[providers.NAME]`), or `log` for the built-in default. */
  readonly name: string
  readonly type: string
  /** Resolves when the provider accepted the message; rejects otherwise. Must honour `signal`. */
  send(message: OutboundMessage, signal: AbortSignal): Promise<void>
}

/**
 * The provider says the recipient itself is invalid (not a number, no mailbox):
 * trying the next provider cannot help, so failover stops.
 */
export class RecipientRejectedError extends Error {}
