/**
 * Logto's HTTP SMS and HTTP email connectors (docs/integrations.md#logto):
 * `{ to, type, payload: { code, locale, ... }, ip }`, authenticated by the
 * connector's `authorization` value, which Logto sends as the Authorization
 * header verbatim. Logto passes a non-2xx answer's body on as its error's
 * data, so a refusal's body is otpd's message as plain text.
 */
import type { HookAdapter, HookAuth, HookParse, HookRequest, HookSettings } from './adapter.ts'
import { emptyAccepted, RECIPIENT_AS_INVALID, sameSecret, textRefusal } from './gateway-kit.ts'
import { json, objectAt, stringAt } from './payload.ts'

function authenticate(request: HookRequest, settings: HookSettings): HookAuth {
  if (!settings.secret) return { ok: false, reason: 'the Authorization value is not set' }
  const given = request.headers.get('authorization')
  if (given === null) return { ok: false, reason: 'Authorization missing' }
  return sameSecret(given, settings.secret) ? { ok: true } : { ok: false, reason: 'Authorization does not match' }
}

function parse(request: HookRequest): HookParse {
  const body = json(request.rawBody)
  const to = body && stringAt(body, 'to')
  const payload = body && objectAt(body, 'payload')
  if (!body || !to || !payload || !stringAt(body, 'type')) return { ok: false, reason: 'not { to, type, payload }: not a Logto HTTP connector request' }
  const code = stringAt(payload, 'code')
  if (!code) return { ok: false, reason: 'payload has no code (otpd delivers codes, not links alone)' }
  const locale = stringAt(payload, 'locale')
  // The SMS connector sends a number, the email connector an address: `to` says which.
  const channel = to.includes('@') ? 'email' : 'sms'
  const link = channel === 'email' ? stringAt(payload, 'link') : undefined
  // Logto keeps a number as digits alone (core-kit phoneRegEx): its E.164 form takes a `+`.
  const recipient = channel === 'sms' && !to.startsWith('+') ? `+${to}` : to
  return { ok: true, message: { channel, recipient, code, locale, link } }
}

export const logtoHook: HookAdapter = {
  type: 'logto',
  authenticate,
  parse,
  accepted: emptyAccepted,
  refused: (refusal) => textRefusal(refusal, RECIPIENT_AS_INVALID),
}
