/** The reserved test recipients (docs/api.md#limits, docs/api.md#test-recipients). */
import type { Channel, TestMode } from './types.ts'

export const TEST_CODE = '123456'

export const TEST_RECIPIENTS = {
  TEST_PHONE_SUCCESS: '+15550100001',
  TEST_PHONE_FAIL: '+15550100002',
  TEST_PHONE_EXPIRED: '+15550100003',
  TEST_EMAIL_SUCCESS: 'success@otpd.test',
  TEST_EMAIL_FAIL: 'fail@otpd.test',
} as const

const PHONES: Record<string, TestMode> = {
  [TEST_RECIPIENTS.TEST_PHONE_SUCCESS]: 'success',
  [TEST_RECIPIENTS.TEST_PHONE_FAIL]: 'fail',
  [TEST_RECIPIENTS.TEST_PHONE_EXPIRED]: 'expired',
}
const EMAILS: Record<string, TestMode> = {
  [TEST_RECIPIENTS.TEST_EMAIL_SUCCESS]: 'success',
  [TEST_RECIPIENTS.TEST_EMAIL_FAIL]: 'fail',
}

/** The test behaviour of a (normalised) recipient on a channel, or null for a real one. */
export function testModeOf(channel: Channel, normalizedRecipient: string): TestMode | null {
  const table = channel === 'email' ? EMAILS : PHONES
  return Object.hasOwn(table, normalizedRecipient) ? table[normalizedRecipient]! : null
}

/**
 * The identity a recipient is counted under. Email domains are case-insensitive
 * and mailbox case is ignored by every real provider, so `A@x.io` and `a@x.io`
 * share one set of limits: changing case must not buy more codes.
 */
export function normalizeRecipient(channel: Channel, recipient: string): string {
  return channel === 'email' ? recipient.toLowerCase() : recipient
}
