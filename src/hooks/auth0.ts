/**
 * Auth0's custom SMS gateway of a passwordless connection
 * (docs/integrations.md#auth0): `{ recipient, body, sender }` as JSON, with a
 * JWT in `Authorization: Bearer` that Auth0 signs (HS256) with the
 * connection's `gateway_authentication.secret`, carrying its `subject` and
 * `audience`. Auth0 reads only the status (200 or not), so refusals are told by
 * their status and the JSON body is for the operator's logs.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { HookAdapter, HookAuth, HookParse, HookRequest, HookSettings } from './adapter.ts'
import { acceptedReply, bearerToken, booleanOption, jsonObject, jsonRefusal, phoneNumber, stringField, stringOption } from './gateway-kit.ts'
import { gatewaySettings } from './gateway-options.ts'

/** Clock difference allowed against `exp` and `nbf`, when the token has them. */
const LEEWAY_SECONDS = 30
const SEGMENT = /^[A-Za-z0-9_-]+$/

const refuse = (reason: string): HookAuth => ({ ok: false, reason })

function decodeSegment(segment: string): Record<string, unknown> | undefined {
  if (!SEGMENT.test(segment)) return undefined
  return jsonObject(Buffer.from(segment, 'base64url'))
}

function signingKey(settings: HookSettings, secret: string): Buffer {
  // Auth0's `secret_base64_encoded`: the secret is base64url text; Node's decoder also takes the standard alphabet.
  return booleanOption(settings, 'secret_base64', false) ? Buffer.from(secret, 'base64url') : Buffer.from(secret, 'utf8')
}

function signatureMatches(signed: string, signature: string, key: Buffer): boolean {
  if (!SEGMENT.test(signature)) return false
  const presented = Buffer.from(signature, 'base64url')
  const expected = createHmac('sha256', key).update(signed).digest()
  return presented.length === expected.length && timingSafeEqual(presented, expected)
}

function audienceMatches(aud: unknown, audience: string): boolean {
  if (typeof aud === 'string') return aud === audience
  return Array.isArray(aud) && aud.includes(audience)
}

function claimsCheck(claims: Record<string, unknown>, settings: HookSettings, now: number): HookAuth {
  if (!audienceMatches(claims.aud, stringOption(settings, 'audience', ''))) return refuse('token audience does not match')
  if (claims.sub !== stringOption(settings, 'subject', '')) return refuse('token subject does not match')
  const seconds = now / 1000
  if (typeof claims.exp === 'number' && seconds > claims.exp + LEEWAY_SECONDS) return refuse('token expired')
  if (typeof claims.nbf === 'number' && seconds < claims.nbf - LEEWAY_SECONDS) return refuse('token not yet valid')
  return { ok: true }
}

export function verifyGatewayToken(request: HookRequest, settings: HookSettings): HookAuth {
  const secret = settings.secret
  if (!secret || !stringOption(settings, 'audience', '') || !stringOption(settings, 'subject', '')) return refuse('hook credentials not configured')
  const token = bearerToken(request.headers)
  if (token === undefined) return refuse('no bearer token')
  const parts = token.split('.')
  if (parts.length !== 3) return refuse('malformed token')
  const [head, body, signature] = parts as [string, string, string]
  // Only HS256: a token naming `none` or another algorithm is refused before any key is used.
  if (decodeSegment(head)?.alg !== 'HS256') return refuse('token algorithm is not HS256')
  if (!signatureMatches(`${head}.${body}`, signature, signingKey(settings, secret))) return refuse('bad token signature')
  const claims = decodeSegment(body)
  if (claims === undefined) return refuse('malformed token claims')
  return claimsCheck(claims, settings, request.now)
}

function parseGatewayMessage(request: HookRequest): HookParse {
  const payload = jsonObject(request.rawBody)
  if (payload === undefined) return { ok: false, reason: 'body is not a JSON object' }
  const recipient = stringField(payload, 'recipient')
  const text = stringField(payload, 'body')
  if (recipient === undefined) return { ok: false, reason: 'recipient is missing' }
  if (text === undefined) return { ok: false, reason: 'body is missing' }
  return { ok: true, message: { channel: 'sms', recipient: phoneNumber(recipient), text } }
}

export const auth0Hook: HookAdapter = {
  type: 'auth0',
  ...gatewaySettings('auth0'),
  authenticate: verifyGatewayToken,
  parse: parseGatewayMessage,
  accepted: acceptedReply,
  refused: jsonRefusal,
}
