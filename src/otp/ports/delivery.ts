/**
 * Delivery of one message over its channel (delivery/ implements it).
 */
import type { OutboundMessage } from '../types.ts'

/** Delivers one message over its channel; throws when every provider failed. */
export interface Delivery {
  deliver(message: OutboundMessage): Promise<{ provider: string }>
}
