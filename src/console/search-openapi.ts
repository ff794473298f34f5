/** The OpenAPI operation of the search by recipient (search-routes.ts; docs/console.md#verifications). */
import { Type as T } from '@sinclair/typebox'
import { errors, type Json } from '../http/openapi-parts.ts'
import { RECIPIENT_SEARCHES_PER_HOUR, recipientSearchesLimited } from '../otp/console-search.ts'
import { ConsoleMsg } from './error-texts.ts'
import { sentence, signedInOperation } from './openapi.ts'

const LIMITED = T.String({
  pattern: `^Too many searches by recipient: at most ${RECIPIENT_SEARCHES_PER_HOUR} an hour per operator\\. Please try again in [0-9]+ seconds\\.$`,
  examples: [recipientSearchesLimited(1200)],
})

export const searchOperations: Record<string, Json> = {
  '/console/api/verifications/search': {
    post: signedInOperation({
      id: 'consoleSearchVerifications',
      summary: `Verifications by a full number or address (hashed as stored) with the GET's filters: a POST keeps it out of URLs; at most ${RECIPIENT_SEARCHES_PER_HOUR} an hour per operator, each in the audit log`,
      state: true,
      ok: [
        200,
        "The GET's answer",
        'ConsoleVerificationsResponse',
        {
          from: '2025-12-31T13:00:00.000Z',
          to: '2026-01-01T13:00:00.000Z',
          verifications: [],
          next: null,
          refusals: [
            {
              event_id: '0f7e2c1a-9b8d-4c6e-a5f4-3b2a1c0d9e8f',
              account: 'default',
              occurred_at: '2026-01-01T12:00:00.000Z',
              channel: 'sms',
              recipient: '+**********23',
              rule: 'geo',
              country: 'UZ',
            },
          ],
        },
      ],
      body: ['ConsoleSearchBody', { recipient: '+1 415 555 0123', period: '7d' }],
      more: {
        '400': errors('A field is not valid; `error` names it', [
          sentence('recipient must be a phone number in E.164 form (+14155550123) or an email address'),
        ]),
        '403': errors('No CSRF token, or a wrong one', [ConsoleMsg.csrf]),
        '404': errors('No such account', [sentence("account 'shop' does not exist")]),
        '429': errors('The operator made too many searches by recipient in the last hour', [LIMITED], { retry: true }),
      },
    }),
  },
}
