/**
 * An event's body in three parts around the account's name and the sequence
 * (otp/events.ts eventBodyAround), which the PostgreSQL engine fills in inside
 * the statement that writes the event: put together, exactly eventBody.
 */
import { expect, test } from 'bun:test'
import { eventBody, eventBodyAround } from '../../src/otp/events.ts'
import type { NewEvent } from '../../src/otp/ports/index.ts'
import type { Verification } from '../../src/otp/types.ts'

const verification = { id: 'v_1', channel: 'sms', recipientMask: '+1415****123', testMode: null } as unknown as Verification
const events: NewEvent[] = [
  { type: 'verification.sent', accountId: 1, at: Date.UTC(2026, 0, 1), verification, status: 'pending', extra: { provider: 'twilio' } },
  { type: 'verification.approved', accountId: 1, at: Date.UTC(2026, 0, 1, 0, 0, 1), verification, status: 'approved', extra: {} },
  {
    type: 'send.blocked',
    accountId: 2,
    at: Date.UTC(2026, 0, 2),
    verification: null,
    status: null,
    extra: { rule: 'conversion', country: 'UZ', prefix: '+99890****', channel: 'sms', recipient: '+99890****567' },
  },
]

test('head + the name as a JSON string + middle + the sequence + tail is eventBody, for every kind of event', () => {
  for (const e of events) {
    for (const [account, sequence] of [
      ['default', 1],
      ['acme.eu_2-x', 12],
      ['a', 0],
    ] as const) {
      const p = eventBodyAround(e, 'id-1')!
      expect(p.head + JSON.stringify(account) + p.middle + String(sequence) + p.tail).toBe(eventBody(e, 'id-1', account, sequence))
    }
  }
})

test('null when a field holds one of the stand-ins (the engine then reads both values)', () => {
  const odd = { ...events[0]!, extra: { provider: '\u0000account' } }
  expect(eventBodyAround(odd, 'id-1')).toBeNull()
  expect(eventBodyAround({ ...events[0]!, extra: { provider: '\u0000sequence' } }, 'id-1')).toBeNull()
})
