/**
 * Ory Kratos's HTTP courier (docs/integrations.md#ory-kratos): Kratos renders the
 * operator's Jsonnet over its template data and POSTs the result. The Jsonnet
 * that docs/integrations.md gives passes `recipient`, `message_type`,
 * `template_type`, `subject`, `body` and the codes of `template_data`; otpd
 * writes a code's text from its catalogue, and delivers a message without a
 * code (a recovery link, a notice) as Kratos wrote it. Authentication is
 * Kratos's `request_config.auth`: `api_key` (a header and its value) or
 * `basic_auth`. Kratos only logs a failed answer and retries the message.
 */
import type { HookAdapter, HookAuth, HookMessage, HookParse, HookRequest, HookSettings } from './adapter.ts'
import { acceptedReply, basicMatches, jsonObject, phoneNumber, sameSecret, stringField, stringOption, textRefusal } from './gateway-kit.ts'
import { gatewaySettings } from './gateway-options.ts'

/** Where each template type keeps its code; SMS recovery keeps it under `verification_code`, as Kratos's model names it. */
const CODE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  login_code_valid: ['login_code'],
  registration_code_valid: ['registration_code'],
  verification_code_valid: ['verification_code'],
  recovery_code_valid: ['recovery_code', 'verification_code'],
}
const ANY_CODE = ['login_code', 'registration_code', 'verification_code', 'recovery_code']
/** Template types that carry no code: their text is delivered as Kratos wrote it. */
const WITHOUT_CODE = new Set([
  'recovery_valid',
  'verification_valid',
  'recovery_invalid',
  'verification_invalid',
  'recovery_code_invalid',
  'verification_code_invalid',
])

function authenticateCourier(request: HookRequest, settings: HookSettings): HookAuth {
  const secret = settings.secret
  if (!secret) return { ok: false, reason: 'hook credentials not configured' }
  if (stringOption(settings, 'auth', 'api_key') === 'basic_auth') {
    return basicMatches(request.headers, settings) ? { ok: true } : { ok: false, reason: 'bad basic credentials' }
  }
  const presented = request.headers.get(stringOption(settings, 'header', 'Authorization'))
  if (presented === null) return { ok: false, reason: 'no api key header' }
  return sameSecret(presented, secret) ? { ok: true } : { ok: false, reason: 'bad api key' }
}

function codeOf(templateType: string | undefined, data: Record<string, unknown>): string | undefined {
  if (templateType !== undefined && WITHOUT_CODE.has(templateType)) return undefined
  const names = (templateType !== undefined && CODE_FIELDS[templateType]) || ANY_CODE
  return stringField(data, ...names)?.trim()
}

function channelOf(messageType: string | undefined, recipient: string): HookMessage['channel'] {
  if (messageType === 'email' || messageType === 'sms') return messageType
  return recipient.includes('@') ? 'email' : 'sms'
}

function parseCourierMessage(request: HookRequest): HookParse {
  const payload = jsonObject(request.rawBody)
  if (payload === undefined) return { ok: false, reason: 'body is not a JSON object' }
  const given = stringField(payload, 'recipient')
  if (given === undefined) return { ok: false, reason: 'recipient is missing' }
  const channel = channelOf(stringField(payload, 'message_type'), given)
  const recipient = channel === 'sms' ? phoneNumber(given) : given.trim()
  const data = typeof payload.template_data === 'object' && payload.template_data !== null ? (payload.template_data as Record<string, unknown>) : {}
  const code = codeOf(stringField(payload, 'template_type'), data)
  if (code !== undefined) {
    const locale = stringField(payload, 'locale')
    return { ok: true, message: { channel, recipient, code, ...(locale === undefined ? {} : { locale }) } }
  }
  const text = stringField(payload, 'body')
  if (text === undefined) return { ok: false, reason: 'neither a code nor a body' }
  const subject = channel === 'email' ? stringField(payload, 'subject') : undefined
  return { ok: true, message: { channel, recipient, text, ...(subject === undefined ? {} : { subject }) } }
}

export const kratosHook: HookAdapter = {
  type: 'kratos',
  ...gatewaySettings('kratos'),
  authenticate: authenticateCourier,
  parse: parseCourierMessage,
  accepted: acceptedReply,
  refused: textRefusal,
}
