/**
 * Request and response schemas (plain TypeBox: Elysia's `t` variants coerce
 * numeric strings, e.g. its Integer accepts "5", which docs/api.md#request-bodies-and-validation
 * forbids). The validator
 * (validate.ts) checks requests against these same field schemas, in the order
 * docs/api.md#request-bodies-and-validation fixes, so the schema is the one source of each rule.
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

export const Channel = t.Union([t.Literal('sms'), t.Literal('email'), t.Literal('voice'), t.Literal('whatsapp')])
export const PhoneRecipient = t.String({ pattern: '^\\+[1-9][0-9]{1,14}$', description: 'E.164 phone number' })
export const EmailRecipient = t.String({ pattern: EMAIL, description: 'email address' })
export const Message = t.String({ pattern: MESSAGE_CHARS, description: 'template, 1-1600 characters; {code} is replaced by the code' })
export const MessagePlaceholder = t.String({ pattern: '\\{code\\}' })
export const Subject = t.String({ pattern: SUBJECT_CHARS, description: 'email subject, one line of 1-200 characters' })
export const ExpiresIn = t.Integer({ minimum: 60, maximum: 3600, default: 300 })
export const Code = t.String({ pattern: '^[0-9]{4,10}$' })
/** A workflow's seconds per step (docs/api.md#workflows). */
export const ChannelTimeout = t.Integer({ minimum: 15, maximum: 900 })

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

/** The templated messages as patterns, for the documented response schemas (error-texts.ts has the templates). */
export const KeyRateLimitMessage = t.String({
  pattern: '^Rate limit exceeded: Maximum [0-9]+ requests per minute\\. Please try again in [0-9]+ seconds\\.$',
  examples: ['Rate limit exceeded: Maximum 120 requests per minute. Please try again in 12 seconds.'],
})
export const RecipientRateLimitMessage = t.String({
  pattern: '^Rate limit exceeded: Maximum [0-9]+ verification codes per (minute|hour|24 hours)\\. Please try again in [0-9]+ seconds\\.$',
  examples: ['Rate limit exceeded: Maximum 2 verification codes per minute. Please try again in 41 seconds.'],
})
export const RecipientFailureCapMessage = t.String({
  pattern: '^Rate limit exceeded: too many failed attempts for this recipient\\. Please try again in [0-9]+ seconds\\.$',
  examples: ['Rate limit exceeded: too many failed attempts for this recipient. Please try again in 3600 seconds.'],
})
export const LockoutMessage = t.String({
  pattern: '^Too many failed attempts\\. Please try again in [0-9]+ minutes? or request a new code\\.$',
  examples: ['Too many failed attempts. Please try again in 15 minutes or request a new code.'],
})
/** `[messages] sms_max_segments` (docs/messages.md#encoding-and-segments). */
export const SmsTooLongMessage = t.String({ pattern: '^message is longer than [0-9]+ SMS segments$', examples: ['message is longer than 1 SMS segments'] })
/** `[messages] voice_max_characters` (docs/messages.md#voice). */
export const VoiceTooLongMessage = t.String({
  pattern: '^message is longer than [0-9]+ characters for a voice call$',
  examples: ['message is longer than 300 characters for a voice call'],
})
/** `/next` that cannot start a step (docs/api.md#workflows). */
export const NoNextMessage = t.Union([
  t.Literal('Verification has no next step'),
  t.Literal('Verification is already approved'),
  t.Literal('Verification is already expired'),
  t.Literal('Verification is already failed'),
  t.Literal('Verification is already canceled'),
  t.Literal('Verification is already locked'),
])
/** A workflow step's channel, recipient or repetition (docs/api.md#workflows), as a pattern; error-texts.ts has the templates. */
export const WorkflowStepMessage = t.String({
  pattern:
    '^workflow step [1-3](: channel must be one of: sms, email, voice, whatsapp|: recipient must be a valid email address for the email channel|: recipient must be a valid E\\.164 phone number for SMS, voice and WhatsApp| repeats step [1-3])$',
  examples: ['workflow step 2: recipient must be a valid email address for the email channel'],
})
/** docs/api.md#verification-status: cancel of a verification that is already over. */
export const AlreadyFinalMessage = t.Union([
  t.Literal('Verification is already approved'),
  t.Literal('Verification is already expired'),
  t.Literal('Verification is already failed'),
])
/** docs/api.md#fraud-guard (fraud guard), as patterns; error-texts.ts has the templates. */
export const CountryBlockedMessage = t.String({
  pattern: '^Sending to this destination country is not allowed: [A-Z]{2}$',
  examples: ['Sending to this destination country is not allowed: UZ'],
})
export const IpRateLimitMessage = t.String({
  pattern: '^Rate limit exceeded: Maximum [0-9]+ verification codes per hour for this IP address\\. Please try again in [0-9]+ seconds\\.$',
  examples: ['Rate limit exceeded: Maximum 10 verification codes per hour for this IP address. Please try again in 1800 seconds.'],
})
export const PumpingBlockedMessage = t.String({
  pattern: '^Sending to this destination is temporarily blocked \\(suspected SMS pumping\\)\\. Please try again in [0-9]+ seconds\\.$',
  examples: ['Sending to this destination is temporarily blocked (suspected SMS pumping). Please try again in 900 seconds.'],
})
export const DailyCreditLimitMessage = t.String({
  pattern: '^Daily credit limit of [0-9]+ reached for this account\\. Please try again in [0-9]+ seconds\\.$',
  examples: ['Daily credit limit of 1000 reached for this account. Please try again in 3600 seconds.'],
})

export const SendResponse = t.Object(
  {
    success: t.Literal(true),
    verification_id: Uuid,
    expires_at: Timestamp,
    request_id: RequestId,
  },
  exact,
)

export const VerifyResponse = t.Object(
  {
    success: t.Literal(true),
    verified: t.Boolean(),
    message: t.Union([t.Literal('Code verified successfully'), t.Literal('Invalid code'), t.Literal('Code expired'), t.Literal('Code already used')]),
    request_id: RequestId,
  },
  exact,
)

export const ErrorResponse = t.Object(
  {
    error: t.String(),
    request_id: RequestId,
    retry_after: t.Optional(t.Integer({ minimum: 1 })),
  },
  exact,
)

export const LockoutResponse = t.Object(
  {
    success: t.Literal(true),
    verified: t.Literal(false),
    message: LockoutMessage,
    request_id: RequestId,
    retry_after: t.Integer({ minimum: 1 }),
  },
  exact,
)

export const HealthResponse = t.Object({ status: t.Literal('ok'), request_id: RequestId }, exact)

const CheckState = t.Union([t.Literal('ok'), t.Literal('failed')])
const Checks = t.Object({ database: CheckState, migrations: CheckState, delivery: CheckState }, exact)
/** The admin listener's /readyz only: each provider's circuit by provider name (docs/delivery.md#circuit-breaking). */
const Circuits = t.Optional(t.Record(t.String(), t.Union([t.Literal('closed'), t.Literal('open'), t.Literal('half_open')])))
export const ReadyResponse = t.Object({ status: t.Literal('ready'), checks: Checks, providers: Circuits, request_id: RequestId }, exact)
export const NotReadyResponse = t.Object(
  {
    status: t.Literal('not ready'),
    error: t.String({ pattern: '^Not ready: (database|migrations|delivery)(, (database|migrations|delivery))*$' }),
    checks: Checks,
    providers: Circuits,
    request_id: RequestId,
  },
  exact,
)

/** An error body whose `error` is one of `messages` (exact texts or a TypeBox pattern); `retry_after` required on 429s. */
export function ErrorWith(messages: (string | TSchema)[], opts: { retryAfter?: boolean } = {}) {
  const one = messages.map((m) => (typeof m === 'string' ? t.Literal(m) : m))
  const error = one.length === 1 ? one[0]! : t.Union(one)
  const base = { error, request_id: RequestId }
  return opts.retryAfter ? t.Object({ ...base, retry_after: t.Integer({ minimum: 1 }) }, exact) : t.Object(base, exact)
}

// --- The document's own models (app/openapi.ts): what the routes accept, written for generated clients. ---

/** The optional send field `ip` (docs/api.md#fraud-guard). */
export const Ip = t.String({ description: "the end user's IP address as the caller saw it: IPv4 or IPv6 text", examples: ['203.0.113.7'] })
/** expires_in without a `default` keyword, which makes generated clients require the field; the default is said in words. */
const ExpiresInDoc = t.Integer({ minimum: 60, maximum: 3600, description: 'seconds until the code expires; 300 when absent' })
const sendFields = {
  message: t.Optional(t.Intersect([Message, MessagePlaceholder])),
  subject: t.Optional(Subject),
  expires_in: t.Optional(ExpiresInDoc),
  code: t.Optional(t.String({ pattern: Code.pattern, description: 'your own code, 4-10 digits; generated when absent (ignored for test recipients)' })),
  ip: t.Optional(Ip),
  locale: t.Optional(
    t.String({
      description:
        'the language of the text when `message` (and, for email, `subject`) is absent: a BCP 47 tag of a built-in language or of an operator template (`es`, `pt-BR`; `es-MX` uses `es`). See docs/messages.md',
      examples: ['es'],
    }),
  ),
  app_hash: t.Optional(
    t.String({
      pattern: '^[A-Za-z0-9+/]{11}$',
      description: "Android SMS Retriever: your app's 11-character hash, appended to an SMS on a line of its own (ignored for voice and email)",
      examples: ['FA+9qCX9VSu'],
    }),
  ),
}
const TEST_PHONES = 'Test recipients: +15550100001 (verifies with 123456), +15550100002 (every code is `Invalid code`), +15550100003 (created expired).'
export const SmsSendBody = t.Object({
  channel: t.Literal('sms'),
  recipient: t.String({ ...PhoneRecipient, description: `E.164 phone number. ${TEST_PHONES}` }),
  ...sendFields,
})
export const VoiceSendBody = t.Object({
  channel: t.Literal('voice'),
  recipient: t.String({ ...PhoneRecipient, description: `E.164 phone number. ${TEST_PHONES}` }),
  ...sendFields,
})
export const WhatsappSendBody = t.Object({
  channel: t.Literal('whatsapp'),
  recipient: t.String({
    ...PhoneRecipient,
    description: `E.164 phone number; the code goes in the provider's approved authentication template (docs/delivery.md#whatsapp). ${TEST_PHONES}`,
  }),
  ...sendFields,
})
export const EmailSendBody = t.Object({
  channel: t.Literal('email'),
  recipient: t.String({
    ...EmailRecipient,
    description: 'email address. Test recipients: success@otpd.test (verifies with 123456), fail@otpd.test (every code is `Invalid code`).',
  }),
  ...sendFields,
})

/** `channel: "auto"` (docs/api.md#workflows): the operator's workflow for the number's country. */
export const AutoSendBody = t.Object({
  channel: t.Literal('auto'),
  recipient: t.String({ ...PhoneRecipient, description: "E.164 phone number: its country picks the operator's workflow ([[routing]])" }),
  channel_timeout: t.Optional(
    t.Integer({ minimum: 15, maximum: 900, description: "seconds a step is given before the next one starts; the operator's, else 60, when absent" }),
  ),
  ...sendFields,
})

/** A step of a workflow send (docs/api.md#workflows). */
export const WorkflowStepBody = t.Object({
  channel: Channel,
  recipient: t.Optional(
    t.String({
      description:
        "this step's recipient: an E.164 phone number for sms, voice and whatsapp, an email address for email; absent: the send's `recipient`, which must then fit this channel",
    }),
  ),
})
export const WorkflowSendBody = t.Object({
  workflow: t.Array(WorkflowStepBody, {
    minItems: 1,
    maxItems: 3,
    description:
      'the channels tried in turn, for one verification and one code: the next starts when a delivery fails for good, after `channel_timeout`, or on `/next`. No step may repeat the channel and recipient of another. Not with `channel`',
  }),
  recipient: t.Optional(t.String({ description: "every step's recipient unless the step names its own" })),
  channel_timeout: t.Optional(
    t.Integer({
      minimum: 15,
      maximum: 900,
      description: 'seconds a step is given before the next one starts, unless a correct code comes first; 60 when absent',
    }),
  ),
  ...sendFields,
})

export const VerificationStatus = t.Union(
  [t.Literal('pending'), t.Literal('approved'), t.Literal('expired'), t.Literal('locked'), t.Literal('canceled'), t.Literal('failed')],
  {
    description: 'decided in this order: canceled, failed, approved (used), expired, locked, pending',
  },
)
export const DeliveryStatus = t.Union([
  t.Literal('sending'),
  t.Literal('accepted'),
  t.Literal('delivered'),
  t.Literal('undelivered'),
  t.Literal('failed'),
  t.Literal('unknown'),
])
export const DeliveryInfo = t.Object(
  {
    status: DeliveryStatus,
    provider: t.Union([t.String(), t.Null()], { description: 'the provider (its name in the config) that took the message; null while none has' }),
    updated_at: Timestamp,
    encoding: t.Optional(t.Union([t.Literal('GSM-7'), t.Literal('UCS-2')], { description: 'SMS only: the encoding of the text as sent' })),
    segments: t.Optional(t.Integer({ minimum: 1, description: 'SMS only: the segments the text took (what vendors bill)' })),
    language: t.Optional(t.String({ description: "WhatsApp only: the approved template's language the provider used, as Meta spells it (`pt_BR`)" })),
    error: t.Optional(
      t.Object(
        { code: t.String(), title: t.String() },
        { ...exact, description: "`undelivered` only, when the vendor gave one: its error code and title (Meta's `131026`, `Message undeliverable`)" },
      ),
    ),
  },
  exact,
)
export const StepEnd = t.Union(
  [t.Literal('delivery_failed'), t.Literal('undelivered'), t.Literal('timeout'), t.Literal('requested'), t.Literal('fraud_blocked')],
  {
    description:
      'why the step ended: no provider took it, a receipt said undelivered, `channel_timeout` passed, the client asked (`/next`), or the fraud guard refused it',
  },
)
export const StepInfo = t.Object(
  {
    channel: Channel,
    recipient: t.String({ description: "the step's recipient, masked" }),
    provider: t.Union([t.String(), t.Null()], { description: 'the provider that took its message; null while none has' }),
    delivery: t.Union([DeliveryStatus, t.Null()], { description: 'null for a step not started, and for test recipients' }),
    started_at: t.Union([Timestamp, t.Null()]),
    due_at: t.Union([Timestamp, t.Null()], { description: 'when a step not yet started starts unless a correct code comes first; null when none is due' }),
    ended_at: t.Union([Timestamp, t.Null()]),
    ended_reason: t.Union([StepEnd, t.Null()]),
  },
  exact,
)
export const StatusResponse = t.Object(
  {
    success: t.Literal(true),
    verification_id: Uuid,
    channel: Channel,
    recipient: t.String({ description: 'the recipient, masked' }),
    status: VerificationStatus,
    created_at: Timestamp,
    expires_at: Timestamp,
    failed_attempts: t.Integer({ minimum: 0 }),
    delivery: t.Union([DeliveryInfo, t.Null()], { description: "null for test recipients; with a workflow, the current step's" }),
    current_step: t.Optional(t.Integer({ minimum: 0, maximum: 2, description: 'a workflow send only: the index in `steps` of the step started last' })),
    channel_timeout: t.Optional(t.Integer({ minimum: 15, maximum: 900, description: "a workflow send only: the send's `channel_timeout`" })),
    steps: t.Optional(t.Array(StepInfo, { description: 'a workflow send only: its steps, in order' })),
    request_id: RequestId,
  },
  exact,
)
export const NextResponse = t.Object(
  {
    success: t.Literal(true),
    verification_id: Uuid,
    current_step: t.Integer({ minimum: 1, maximum: 2, description: 'the index in `steps` of the step it started' }),
    channel: Channel,
    request_id: RequestId,
  },
  exact,
)
export const CancelResponse = t.Object({ success: t.Literal(true), verification_id: Uuid, status: t.Literal('canceled'), request_id: RequestId }, exact)
/** Cancel takes no fields: an empty body, or any JSON object, which is ignored. */
export const CancelBody = t.Object({}, { description: 'ignored' })
export const ReceiptResponse = t.Object({ success: t.Literal(true), request_id: RequestId }, exact)
/** The webhook provider's receipt (docs/api.md#delivery-receipts); Twilio and Vonage post their own documented forms. */
export const WebhookReceipt = t.Object({ verification_id: t.String(), status: t.Union([t.Literal('delivered'), t.Literal('undelivered')]) })
/** The Idempotency-Key header's value (docs/api.md#idempotency-keys). */
export const IdempotencyKey = t.String({ pattern: '^[\\x21-\\x7E]{1,255}$', description: '1-255 visible ASCII characters' })
