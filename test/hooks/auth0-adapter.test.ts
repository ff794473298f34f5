/**
 * The auth0 adapter against what Auth0 sends to a passwordless connection's
 * custom SMS gateway (docs/integrations.md#auth0): the documented JSON body and
 * a bearer JWT signed HS256 with the gateway secret, made here with `jose`.
 */
import { describe, expect, test } from 'bun:test'
import { SignJWT } from 'jose'
import { auth0Hook } from '../../src/hooks/auth0.ts'
import { HOOK_NOW, hookRequest, hookSettings } from './gateway-request.ts'

const SECRET = 'MySecretToSignTheToken'
const OPTIONS = { audience: 'urn:MySmsGateway', subject: 'urn:Auth0' }
const settings = hookSettings('auth0', SECRET, OPTIONS)
const BODY = '{"recipient":"+1 399 999","body":"Your verification code is: 12345","sender":"+1 234 567"}'
const WITH_REQ =
  '{"recipient":"+14155550100","body":"Your verification code is: 482913","sender":"+1 234 567","req":{"ip":"167.56.227.117","user-agent":"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_14_3)"}}'
const seconds = HOOK_NOW / 1000

interface Claims {
  sub?: string
  aud?: string | string[]
  exp?: number
  nbf?: number
  alg?: string
}

async function token(key: Uint8Array | string = SECRET, claims: Claims = {}): Promise<string> {
  const jwt = new SignJWT({}).setProtectedHeader({ alg: claims.alg ?? 'HS256', typ: 'JWT' }).setIssuedAt(seconds)
  jwt.setSubject(claims.sub ?? OPTIONS.subject).setAudience(claims.aud ?? OPTIONS.audience)
  if (claims.exp !== undefined) jwt.setExpirationTime(claims.exp)
  if (claims.nbf !== undefined) jwt.setNotBefore(claims.nbf)
  return jwt.sign(typeof key === 'string' ? new TextEncoder().encode(key) : key)
}

const bearer = (jwt: string) => ({ authorization: `Bearer ${jwt}`, 'content-type': 'application/json' })

describe('auth0: the gateway JWT', () => {
  test('a token signed with the secret, with the configured subject and audience, passes', async () => {
    expect(auth0Hook.authenticate(hookRequest(BODY, bearer(await token())), settings)).toEqual({ ok: true })
  })

  test('an audience list holding the configured audience passes; exp and nbf within 30 s of the clock pass', async () => {
    const jwt = await token(SECRET, { aud: ['urn:Other', 'urn:MySmsGateway'], exp: seconds - 20, nbf: seconds + 20 })
    expect(auth0Hook.authenticate(hookRequest(BODY, bearer(jwt)), settings)).toEqual({ ok: true })
  })

  test('secret_base64: the secret is base64url text and the key is its bytes', async () => {
    const key = new Uint8Array(Array.from({ length: 32 }, (_, i) => (i * 37 + 250) % 256))
    const encoded = Buffer.from(key).toString('base64url')
    const b64 = hookSettings('auth0', encoded, { ...OPTIONS, secret_base64: true })
    expect(auth0Hook.authenticate(hookRequest(BODY, bearer(await token(key))), b64)).toEqual({ ok: true })
    // The same secret read as text is another key.
    expect(auth0Hook.authenticate(hookRequest(BODY, bearer(await token(key))), hookSettings('auth0', encoded, OPTIONS)).ok).toBe(false)
  })

  const refused: [string, () => Promise<Record<string, string>>, string][] = [
    ['no Authorization header', async () => ({}), 'no bearer token'],
    ['a Basic header', async () => ({ authorization: 'Basic dXNlcjpwYXNz' }), 'no bearer token'],
    ['another secret', async () => bearer(await token('not-the-secret')), 'bad token signature'],
    ['HS512 with the secret', async () => bearer(await token(SECRET, { alg: 'HS512' })), 'token algorithm is not HS256'],
    ['another audience', async () => bearer(await token(SECRET, { aud: 'urn:Other' })), 'token audience does not match'],
    ['another subject', async () => bearer(await token(SECRET, { sub: 'urn:Someone' })), 'token subject does not match'],
    ['expired over 30 s ago', async () => bearer(await token(SECRET, { exp: seconds - 31 })), 'token expired'],
    ['valid only from over 30 s on', async () => bearer(await token(SECRET, { nbf: seconds + 31 })), 'token not yet valid'],
    ['two segments', async () => bearer((await token()).split('.').slice(0, 2).join('.')), 'malformed token'],
  ]
  for (const [name, headers, reason] of refused) {
    test(`refused: ${name}`, async () => {
      expect(auth0Hook.authenticate(hookRequest(BODY, await headers()), settings)).toEqual({ ok: false, reason })
    })
  }

  test('refused: alg none, and claims changed after signing', async () => {
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from('{"sub":"urn:Auth0","aud":"urn:MySmsGateway"}').toString('base64url')}.`
    expect(auth0Hook.authenticate(hookRequest(BODY, bearer(none)), settings).ok).toBe(false)
    const [head, , signature] = (await token(SECRET, { sub: 'urn:Someone' })).split('.')
    const forged = `${head}.${Buffer.from(JSON.stringify({ sub: 'urn:Auth0', aud: 'urn:MySmsGateway', iat: seconds })).toString('base64url')}.${signature}`
    expect(auth0Hook.authenticate(hookRequest(BODY, bearer(forged)), settings)).toEqual({ ok: false, reason: 'bad token signature' })
  })

  test('refused when the hook lacks its secret, audience or subject', async () => {
    const jwt = bearer(await token())
    for (const s of [
      hookSettings('auth0', undefined, OPTIONS),
      hookSettings('auth0', SECRET, { subject: 'urn:Auth0' }),
      hookSettings('auth0', SECRET, { audience: 'urn:MySmsGateway' }),
    ]) {
      expect(auth0Hook.authenticate(hookRequest(BODY, jwt), s)).toEqual({ ok: false, reason: 'hook credentials not configured' })
    }
  })
})

describe('auth0: the message', () => {
  test("the documented body: the whole text as given, the number's separators dropped, sender not used", () => {
    expect(auth0Hook.parse(hookRequest(BODY), settings)).toEqual({
      ok: true,
      message: { channel: 'sms', recipient: '+1399999', text: 'Your verification code is: 12345' },
    })
  })

  test('forward_req_info adds `req`, which changes nothing', () => {
    expect(auth0Hook.parse(hookRequest(WITH_REQ), settings)).toEqual({
      ok: true,
      message: { channel: 'sms', recipient: '+14155550100', text: 'Your verification code is: 482913' },
    })
  })

  test('a body that is not the gateway payload is invalid', () => {
    expect(auth0Hook.parse(hookRequest('recipient=+14155550100'), settings)).toEqual({ ok: false, reason: 'body is not a JSON object' })
    expect(auth0Hook.parse(hookRequest('{"body":"Your code: 1"}'), settings)).toEqual({ ok: false, reason: 'recipient is missing' })
    expect(auth0Hook.parse(hookRequest('{"recipient":"+14155550100","body":"  "}'), settings)).toEqual({ ok: false, reason: 'body is missing' })
  })
})

describe('auth0: the answers', () => {
  test('accepted is exactly 200: Auth0 takes any other status as a failure', () => {
    expect(auth0Hook.accepted('ver_1')).toEqual({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"id":"ver_1"}' })
  })

  test('each refusal has its own status, Retry-After where given, and the reason for the operator', () => {
    const r = auth0Hook.refused({ kind: 'rate_limited', message: 'Too many codes to this recipient', retryAfter: 42.2 })
    expect(r).toEqual({
      status: 429,
      headers: { 'content-type': 'application/json', 'retry-after': '43' },
      body: '{"error":"rate_limited","error_description":"Too many codes to this recipient"}',
    })
    const statuses = (['unauthenticated', 'invalid', 'no_credits', 'blocked', 'recipient_rejected', 'unavailable'] as const).map(
      (kind) => auth0Hook.refused({ kind, message: 'm' }).status,
    )
    expect(statuses).toEqual([401, 400, 402, 403, 422, 503])
  })
})
