/** What every delivery provider implements; one file per provider type beside this one. */
import type { OutboundMessage } from '../otp/types.ts'

/** What a provider may say about a message it took: the vendor's id (its receipts name it) and the template language (WhatsApp). */
export interface Accepted {
  ref?: string
  language?: string
}

export interface Provider {
  /** The provider's name in the config (`[providers.NAME]`), or `log` for the built-in default. */
  readonly name: string
  readonly type: string
  /** Resolves when the provider accepted the message (with what it says of it, if anything); rejects otherwise. Must honour `signal`. */
  // biome-ignore lint/suspicious/noConfusingVoidType: most providers have nothing to say and simply return.
  send(message: OutboundMessage, signal: AbortSignal): Promise<void | Accepted>
}

/**
 * The provider says the recipient itself is invalid (not a number, no mailbox):
 * trying the next provider cannot help, so failover stops.
 */
export class RecipientRejectedError extends Error {}

/**
 * The recipient cannot be reached on this channel (a number not on WhatsApp,
 * docs/delivery.md#whatsapp-errors): final for the channel, so no other
 * provider of it is tried, as for a rejected recipient.
 */
export class ChannelUnreachableError extends RecipientRejectedError {}

/**
 * The provider's own setup is wrong (a template or language the vendor does
 * not know, a token it refuses): the next provider is tried, and the error
 * log names the setting to fix (`setting`, such as `providers.meta.template`).
 */
export class ProviderMisconfiguredError extends Error {
  constructor(
    message: string,
    readonly setting: string,
  ) {
    super(message)
  }
}
