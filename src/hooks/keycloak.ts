/**
 * Keycloak's sms-authenticator plugin (netzbegruenung/keycloak-mfa-plugins) in
 * its API mode (docs/integrations.md#keycloak): a POST whose fields the
 * operator names in the plugin (`messageattribute`, `receiverattribute`, ...),
 * as JSON or, with "URL encode data", as a form; the body's type is read from
 * its Content-Type. The token travels in a header (`apiTokenInHeader`, the
 * header named by `apitokenattribute` or Authorization), as Basic
 * (`apiuser` : `apitoken`), or as a body field. The plugin only logs the answer,
 * so a refusal's body is the plain message for Keycloak's log.
 */
import type { HookAdapter, HookAuth, HookParse, HookRequest, HookSettings } from './adapter.ts'
import { acceptedReply, basicMatches, bodyText, jsonObject, phoneNumber, sameSecret, stringField, stringOption, textRefusal } from './gateway-kit.ts'
import { gatewaySettings } from './gateway-options.ts'

type Fields = Record<string, unknown>

function isForm(request: HookRequest): boolean {
  return (request.headers.get('content-type') ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded')
}

/** The body's fields, from JSON or from a form, or undefined when it is neither. */
function bodyFields(request: HookRequest): Fields | undefined {
  if (!isForm(request)) return jsonObject(request.rawBody)
  const text = bodyText(request.rawBody)
  return text === undefined ? undefined : Object.fromEntries(new URLSearchParams(text))
}

function authenticatePlugin(request: HookRequest, settings: HookSettings): HookAuth {
  const secret = settings.secret
  if (!secret) return { ok: false, reason: 'hook credentials not configured' }
  const mode = stringOption(settings, 'auth', 'header')
  if (mode === 'basic') return basicMatches(request.headers, settings) ? { ok: true } : { ok: false, reason: 'bad basic credentials' }
  if (mode === 'attribute') {
    const presented = bodyFields(request)?.[stringOption(settings, 'token_attribute', '')]
    return typeof presented === 'string' && sameSecret(presented, secret) ? { ok: true } : { ok: false, reason: 'bad token attribute' }
  }
  // The plugin sets the header to the API secret as it is, with no scheme of its own.
  const presented = request.headers.get(stringOption(settings, 'token_header', 'Authorization'))
  if (presented === null) return { ok: false, reason: 'no token header' }
  return sameSecret(presented, secret) ? { ok: true } : { ok: false, reason: 'bad token header' }
}

/** The receiver as the plugin's `receiverJsonTemplate` shapes it: `"%s"` by default, or a list of one. */
function receiverOf(value: unknown): string | undefined {
  if (typeof value === 'string' && value.trim() !== '') return value
  if (Array.isArray(value) && value.length === 1) return receiverOf(value[0])
  return undefined
}

function parsePluginMessage(request: HookRequest, settings: HookSettings): HookParse {
  const fields = bodyFields(request)
  if (fields === undefined) return { ok: false, reason: isForm(request) ? 'body is not a form' : 'body is not a JSON object' }
  const receiver = receiverOf(fields[stringOption(settings, 'receiver_attribute', 'to')])
  if (receiver === undefined) return { ok: false, reason: 'receiver attribute is missing' }
  const text = stringField(fields, stringOption(settings, 'message_attribute', 'text'))
  if (text === undefined) return { ok: false, reason: 'message attribute is missing' }
  const uuidAttribute = stringOption(settings, 'uuid_attribute', '')
  const deliveryId = uuidAttribute === '' ? undefined : stringField(fields, uuidAttribute)
  return { ok: true, message: { channel: 'sms', recipient: phoneNumber(receiver), text, ...(deliveryId === undefined ? {} : { deliveryId }) } }
}

export const keycloakHook: HookAdapter = {
  type: 'keycloak',
  ...gatewaySettings('keycloak'),
  authenticate: authenticatePlugin,
  parse: parsePluginMessage,
  accepted: acceptedReply,
  refused: textRefusal,
}
