/**
 * authentik's generic SMS provider (docs/integrations.md#authentik): a JSON
 * POST of `From`, `To`, `Body` (the code) and, in current releases, `Message`
 * (the whole text), with Basic (`auth` : `auth_password`) or Bearer (`auth`).
 * A webhook mapping may reshape the payload; its lower-case keys are read too.
 * authentik shows the answer's text to the user when the status is 400 or
 * more, so a refusal's body is the plain message.
 */
import type { HookAdapter, HookAuth, HookParse, HookRequest, HookSettings } from './adapter.ts'
import { acceptedReply, basicMatches, bearerToken, jsonObject, phoneNumber, sameSecret, stringField, stringOption, textRefusal } from './gateway-kit.ts'
import { gatewaySettings } from './gateway-options.ts'

/** A `Body` of digits only is authentik's token alone; otpd then writes the text from its catalogue. */
const CODE_ONLY = /^[0-9]{4,10}$/

function authenticateProvider(request: HookRequest, settings: HookSettings): HookAuth {
  if (!settings.secret) return { ok: false, reason: 'hook credentials not configured' }
  if (stringOption(settings, 'auth', 'bearer') === 'basic') {
    return basicMatches(request.headers, settings) ? { ok: true } : { ok: false, reason: 'bad basic credentials' }
  }
  const token = bearerToken(request.headers)
  if (token === undefined) return { ok: false, reason: 'no bearer token' }
  return sameSecret(token, settings.secret) ? { ok: true } : { ok: false, reason: 'bad bearer token' }
}

function parseProviderMessage(request: HookRequest): HookParse {
  const payload = jsonObject(request.rawBody)
  if (payload === undefined) return { ok: false, reason: 'body is not a JSON object' }
  const to = stringField(payload, 'To', 'to')
  if (to === undefined) return { ok: false, reason: 'To is missing' }
  const recipient = phoneNumber(to)
  const message = stringField(payload, 'Message', 'message')
  if (message !== undefined) return { ok: true, message: { channel: 'sms', recipient, text: message } }
  const body = stringField(payload, 'Body', 'body')
  if (body === undefined) return { ok: false, reason: 'Body is missing' }
  const code = body.trim()
  return { ok: true, message: CODE_ONLY.test(code) ? { channel: 'sms', recipient, code } : { channel: 'sms', recipient, text: body } }
}

export const authentikHook: HookAdapter = {
  type: 'authentik',
  ...gatewaySettings('authentik'),
  authenticate: authenticateProvider,
  parse: parseProviderMessage,
  accepted: acceptedReply,
  refused: textRefusal,
}
