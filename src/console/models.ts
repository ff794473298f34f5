/**
 * The console API's bodies and answers as TypeBox schemas: the routes check
 * bodies with them (console/validate.ts) and the OpenAPI document
 * (console/openapi.ts) shows them. `message` is the 400's sentence for a
 * field that does not fit.
 */
import { Type as T } from '@sinclair/typebox'
import { AUDIT_ACTIONS } from '../otp/audit.ts'
import { MAX_GRANT } from '../otp/admin.ts'

const strict = { additionalProperties: false } as const
const text = (max: number, message: string) => T.String({ minLength: 1, maxLength: max, message })
const accountName = text(64, 'account must be the name of an account')
const amount = T.Integer({ minimum: 1, maximum: MAX_GRANT, message: `amount must be a whole number from 1 to ${MAX_GRANT}` })
const note = T.String({ maxLength: 500, message: 'note must be text of at most 500 characters' })

export const SignInBody = T.Object(
  {
    name: text(64, 'name must be an operator name'),
    password: text(1024, 'password must be 1-1024 characters'),
    next: T.Optional(T.String({ maxLength: 2048 })),
  },
  strict,
)

export const SessionResponse = T.Object({ operator: T.String(), csrf_token: T.String(), request_id: T.String() })

export const KeyCreateBody = T.Object(
  {
    account: T.Optional(accountName),
    name: T.Optional(T.String({ maxLength: 200, message: 'name must be a single line of at most 200 characters' })),
  },
  strict,
)

export const KeyStatus = T.Union([T.Literal('active'), T.Literal('disabled'), T.Literal('revoked')])

export const Key = T.Object({
  id: T.Integer(),
  prefix: T.String(),
  name: T.String(),
  account: T.String(),
  status: KeyStatus,
  created_at: T.String(),
  last_used_at: T.Union([T.String(), T.Null()]),
})

export const KeyCreated = T.Object({
  key: T.String({ description: 'the key itself: shown this once, never again' }),
  id: T.Integer(),
  prefix: T.String(),
  name: T.String(),
  account: T.String(),
  request_id: T.String(),
})

export const AccountSettingsBody = T.Object(
  {
    countries: T.Optional(
      T.Union([T.Array(T.String({ pattern: '^([A-Z]{2}|\\*)$' }), { minItems: 1, maxItems: 300 }), T.Null()], {
        message:
          "countries must be a list of ISO 3166-1 alpha-2 codes (['US','CA']), ['*'] for every country, or null for the config's fraud.allowed_countries",
      }),
    ),
    daily_credit_limit: T.Optional(
      T.Union([T.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), T.Null()], {
        message: 'daily_credit_limit must be a whole number of at least 1, or null for none',
      }),
    ),
    test_recipients: T.Optional(T.Boolean({ message: 'test_recipients must be true or false' })),
    code_length: T.Optional(T.Integer({ minimum: 4, maximum: 10, message: 'code_length must be a whole number from 4 to 10' })),
  },
  strict,
)

export const Account = T.Object({
  name: T.String(),
  balance: T.Integer(),
  code_length: T.Integer(),
  code_length_is_default: T.Boolean(),
  countries: T.Array(T.String()),
  countries_are_default: T.Boolean(),
  daily_credit_limit: T.Union([T.Integer(), T.Null()]),
  test_recipients: T.Boolean(),
  created_at: T.String(),
})

export const CreditsBody = T.Object({ amount, note: T.Optional(note) }, strict)

export const CreditsResult = T.Object({ account: T.String(), balance: T.Integer(), request_id: T.String() })

export const LedgerEntry = T.Object({
  id: T.Integer(),
  created_at: T.String(),
  kind: T.Union([T.Literal('grant'), T.Literal('debit'), T.Literal('refund')]),
  amount: T.Integer({ description: 'signed: debits count down' }),
  verification_id: T.Union([T.String(), T.Null()]),
  note: T.Union([T.String(), T.Null()]),
})

export const UnblockBody = T.Object(
  {
    scope: text(20, 'scope must be a country code (UZ) or a prefix (+99890123) as the fraud page shows it'),
    account: T.Optional(accountName),
  },
  strict,
)

export const UnblockResult = T.Object({
  account: T.String(),
  scope_kind: T.Union([T.Literal('country'), T.Literal('prefix')]),
  scope: T.String(),
  was_blocked: T.Boolean(),
  request_id: T.String(),
})

export const ReplayResult = T.Object({ id: T.String(), type: T.String(), deliveries: T.Integer(), request_id: T.String() })

export const AuditAction = T.Union(AUDIT_ACTIONS.map((a) => T.Literal(a)))

export const AuditEntry = T.Object({
  id: T.Integer(),
  at: T.String(),
  operator: T.String(),
  source: T.Union([T.Literal('console'), T.Literal('cli')]),
  action: AuditAction,
  subject: T.String(),
  details: T.Object({}, { additionalProperties: true, description: 'what the action changed (never a secret)' }),
})

const requestId = T.String({ description: 'as in X-Request-Id' })

export const SignedOutResponse = T.Object({ signed_out: T.Literal(true), request_id: requestId })
export const KeysResponse = T.Object({ keys: T.Array(Key), request_id: requestId })
export const KeyResponse = T.Object({ key: Key, request_id: requestId })
export const AccountsResponse = T.Object({ accounts: T.Array(Account), request_id: requestId })
export const AccountResponse = T.Object({ account: Account, request_id: requestId })
export const LedgerResponse = T.Object({ account: T.String(), balance: T.Integer(), entries: T.Array(LedgerEntry), request_id: requestId })
export const AuditResponse = T.Object({
  entries: T.Array(AuditEntry),
  next_before_id: T.Union([T.Integer(), T.Null()], { description: 'pass as before_id for the next (older) page; null on the last page' }),
  request_id: requestId,
})

/** POST /console/api/verifications/search (console/search-routes.ts): the GET's parameters as fields, `recipient` among them. */
export const SearchBody = T.Object(
  {
    recipient: T.Optional(T.String({ minLength: 3, maxLength: 320, description: 'A full number (E.164; spaces and dashes allowed) or email address' })),
    period: T.Optional(T.Union([T.Literal('1h'), T.Literal('24h'), T.Literal('7d'), T.Literal('30d')])),
    account: T.Optional(T.String({ minLength: 1, maxLength: 64 })),
    id: T.Optional(T.String({ minLength: 1, maxLength: 64 })),
    country: T.Optional(T.String({ pattern: '^[A-Z]{2}$' })),
    status: T.Optional(T.Union(['pending', 'approved', 'expired', 'locked', 'canceled', 'failed'].map((s) => T.Literal(s)))),
    cursor: T.Optional(T.String({ maxLength: 40 })),
    limit: T.Optional(T.Integer({ minimum: 1, maximum: 200 })),
  },
  strict,
)

export const VerificationsResponse = T.Object({
  from: T.String(),
  to: T.String(),
  verifications: T.Array(T.Object({}, { additionalProperties: true, description: 'as GET /console/api/verifications shows one' })),
  next: T.Union([T.String(), T.Null()]),
  refusals: T.Array(
    T.Object({
      event_id: T.String(),
      account: T.String(),
      occurred_at: T.String(),
      channel: T.Union([T.String(), T.Null()]),
      recipient: T.Union([T.String(), T.Null()]),
      rule: T.Union([T.String(), T.Null()]),
      country: T.Union([T.String(), T.Null()]),
    }),
    { description: "the recipient's sends the fraud guard refused in the period (send.blocked), newest first" },
  ),
  request_id: requestId,
})
