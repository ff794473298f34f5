/**
 * Delivery of one message over its channel (delivery/ implements it).
 */
import type { OutboundMessage } from '../types.ts'

/** Delivers one message over its channel; throws when every provider failed. */
export interface Delivery {
  /** `ref` and `language`: what the provider that took it said (types.ts DeliveryDetail). */
  deliver(message: OutboundMessage): Promise<{ provider: string; ref?: string; language?: string }>
}

/**
 * What an error thrown by `deliver` may say besides its message: the last
 * provider that timed out after its request went out, which may still deliver
 * (docs/delivery.md#slow-providers); null or absent when none did.
 */
export interface DeliveryFailure {
  readonly mayStillDeliver: string | null
}
