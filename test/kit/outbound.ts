/** A message as the router hands it to providers, for provider tests. */
import type { OutboundMessage } from '../../src/otp/types.ts'

export const OUTBOUND_AT = Date.UTC(2026, 0, 1, 12, 0, 0)

export function outbound(over: Partial<OutboundMessage> = {}): OutboundMessage {
  return {
    channel: 'sms',
    recipient: '+14155550123',
    text: 'Your verification code is: 424242',
    subject: 'Your Verification Code',
    locale: 'en',
    code: '424242',
    verificationId: '9a7c0c1e-0000-4000-8000-000000000001',
    expiresAt: OUTBOUND_AT + 300_000,
    ...over,
  }
}
