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

/**
 * The test behaviour of a recipient on a channel, or null for a real one. The
 * five are exact addresses (docs/api.md#test-recipients); an email one matches
 * in any letter case. They are not matched by the counting identity of
 * recipient-identity.ts: `success+ci@otpd.test` is another address, and so an
 * ordinary recipient. Widening the reserved set would give a test nothing it
 * lacks (test recipients already skip every per-recipient limit), and would
 * answer with a known code for an address the client did not write as one.
 */
export function testModeOf(channel: Channel, recipient: string): TestMode | null {
  const table = channel === 'email' ? EMAILS : PHONES
  const key = channel === 'email' ? recipient.toLowerCase() : recipient
  return Object.hasOwn(table, key) ? table[key]! : null
}
