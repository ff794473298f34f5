/**
 * Request and response schemas (plain TypeBox: Elysia's `t` variants coerce
 * numeric strings, e.g. its Integer accepts "5", which DECISIONS.md section 3
 * forbids). The validator
 * (validate.ts) checks requests against these same field schemas, in the order
 * DECISIONS.md section 3 fixes, so the schema is the one source of each rule.
 */
import { Type as t, type Static, type TSchema } from '@sinclair/typebox'
import { ID_SHAPE } from '../lib/verification-id.ts'

// One character: anything but a control character or a lone surrogate, or a
// surrogate pair. Written for a non-unicode RegExp so lengths count code points.
const char = (controls: string) => `(?:[^${controls}\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])`
const MESSAGE_CHARS = `^${char('\\u0000-\\u0009\\u000B-\\u001F\\u007F-\\u009F')}{1,1600}$`
const SUBJECT_CHARS = `^${char('\\u0000-\\u001F\\u007F-\\u009F')}{1,200}$`
// WHATWG "valid e-mail address", with local part <= 64 and whole <= 254 octets (ASCII only, so octets = characters).
const EMAIL =
  "^(?=.{1,254}$)(?=[^@]{1,64}@)[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$"

export const Channel = t.Union([t.Literal('sms'), t.Literal('email'), t.Literal('voice')])
export const PhoneRecipient = t.String({ pattern: '^\\+[1-9][0-9]{1,14}$', description: 'E.164 phone number' })
export const EmailRecipient = t.String({ pattern: EMAIL, description: 'email address' })
export const Message = t.String({ pattern: MESSAGE_CHARS, description: 'template, 1-1600 characters; {code} is replaced by the code' })
export const MessagePlaceholder = t.String({ pattern: '\\{code\\}' })
export const Subject = t.String({ pattern: SUBJECT_CHARS, description: 'email subject, one line of 1-200 characters' })
export const ExpiresIn = t.Integer({ minimum: 60, maximum: 3600, default: 300 })
export const Code = t.String({ pattern: '^[0-9]{4,10}$' })

export const SendBody = t.Object({
  channel: Channel,
  recipient: t.Union([PhoneRecipient, EmailRecipient]),
  message: t.Optional(t.Intersect([Message, MessagePlaceholder])),
  subject: t.Optional(Subject),
  expires_in: t.Optional(ExpiresIn),
  code: t.Optional(Code),
})
export type SendBody = Static<typeof SendBody>

export const VerifyBody = t.Object({
  verification_id: t.String(),
  code: Code,
})
export type VerifyBody = Static<typeof VerifyBody>

// Patterns rather than `format`, so the schemas check without a format registry.
const Uuid = t.String({ pattern: ID_SHAPE.source, description: 'lower-case v4 UUID' })
const Timestamp = t.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$', description: 'UTC, with milliseconds' })
const RequestId = Uuid
const exact = { additionalProperties: false } as const

/** The templated messages as patterns, for the documented response schemas (messages.ts has the templates). */
export const KeyRateLimitMessage = t.String({ pattern: '^Rate limit exceeded: Maximum [0-9]+ requests per minute\\. Please try again in [0-9]+ seconds\\.$' })
export const RecipientRateLimitMessage = t.String({
  pattern: '^Rate limit exceeded: Maximum [0-9]+ verification codes per (minute|hour|24 hours)\\. Please try again in [0-9]+ seconds\\.$',
})
export const LockoutMessage = t.String({ pattern: '^Too many failed attempts\\. Please try again in [0-9]+ minutes? or request a new code\\.$' })

export const SendResponse = t.Object({
  success: t.Literal(true),
  verification_id: Uuid,
  expires_at: Timestamp,
  request_id: RequestId,
}, exact)

export const VerifyResponse = t.Object({
  success: t.Literal(true),
  verified: t.Boolean(),
  message: t.Union([
    t.Literal('Code verified successfully'),
    t.Literal('Invalid code'),
    t.Literal('Code expired'),
    t.Literal('Code already used'),
  ]),
  request_id: RequestId,
}, exact)

export const ErrorResponse = t.Object({
  error: t.String(),
  request_id: RequestId,
  retry_after: t.Optional(t.Integer({ minimum: 1 })),
}, exact)

export const LockoutResponse = t.Object({
  success: t.Literal(true),
  verified: t.Literal(false),
  message: LockoutMessage,
  request_id: RequestId,
  retry_after: t.Integer({ minimum: 1 }),
}, exact)

export const HealthResponse = t.Object({ status: t.Literal('ok'), request_id: RequestId }, exact)

const CheckState = t.Union([t.Literal('ok'), t.Literal('failed')])
const Checks = t.Object({ database: CheckState, migrations: CheckState, delivery: CheckState }, exact)
export const ReadyResponse = t.Object({ status: t.Literal('ready'), checks: Checks, request_id: RequestId }, exact)
export const NotReadyResponse = t.Object(
  { status: t.Literal('not ready'), error: t.String({ pattern: '^Not ready: (database|migrations|delivery)(, (database|migrations|delivery))*$' }), checks: Checks, request_id: RequestId },
  exact,
)

/** An error body whose `error` is one of `messages` (exact texts or a TypeBox pattern); `retry_after` required on 429s. */
export function ErrorWith(messages: (string | TSchema)[], opts: { retryAfter?: boolean } = {}) {
  const one = messages.map((m) => (typeof m === 'string' ? t.Literal(m) : m))
  const error = one.length === 1 ? one[0]! : t.Union(one)
  const base = { error, request_id: RequestId }
  return opts.retryAfter ? t.Object({ ...base, retry_after: t.Integer({ minimum: 1 }) }, exact) : t.Object(base, exact)
}
