/**
 * The authentik adapter against what authentik's generic SMS provider sends
 * (docs/integrations.md#authentik): `requests.post(url, json=payload, ...)`,
 * so Python's `json.dumps` bytes (`", "` and `": "` separators, non-ASCII as
 * `\u` escapes), with Bearer or Basic as `requests` writes them.
 */
import { describe, expect, test } from 'bun:test'
import { authentikHook } from '../../src/hooks/authentik.ts'
import { basicAuth, hookRequest, hookSettings } from './gateway-request.ts'

const JSON_HEADERS = { 'content-type': 'application/json' }
const CURRENT = '{"From": "+15550001111", "To": "+4915112345678", "Body": "482913", "Message": "Use this code to authenticate in authentik: 482913"}'
const TOKEN_ONLY = '{"From": "+15550001111", "To": "+4915112345678", "Body": "482913"}'
const GERMAN = '{"From": "otpd", "To": "+4915112345678", "Body": "482913", "Message": "Verwenden Sie diesen Code f\\u00fcr authentik: 482913"}'
const MAPPED = '{"from": "+15550001111", "to": "+4915112345678", "body": "foo bar baz 482913"}'

const bearer = hookSettings('authentik', 'tok_3f9a', { auth: 'bearer' })
const basic = hookSettings('authentik', 'pa:ss w0rd', { auth: 'basic', username: 'authentik' })

describe('authentik: Bearer and Basic', () => {
  test('Bearer with the configured token passes; the default mode is bearer', () => {
    const headers = { ...JSON_HEADERS, authorization: 'Bearer tok_3f9a' }
    expect(authentikHook.authenticate(hookRequest(CURRENT, headers), bearer)).toEqual({ ok: true })
    expect(authentikHook.authenticate(hookRequest(CURRENT, headers), hookSettings('authentik', 'tok_3f9a'))).toEqual({ ok: true })
  })

  test('Basic with the username and the password (a colon in the password is kept) passes', () => {
    const headers = { ...JSON_HEADERS, authorization: basicAuth('authentik', 'pa:ss w0rd') }
    expect(authentikHook.authenticate(hookRequest(CURRENT, headers), basic)).toEqual({ ok: true })
  })

  const refused: [string, typeof bearer, Record<string, string>, string][] = [
    ['no header, bearer', bearer, {}, 'no bearer token'],
    ['another token', bearer, { authorization: 'Bearer tok_3f9b' }, 'bad bearer token'],
    ['Basic sent to a bearer hook', bearer, { authorization: basicAuth('authentik', 'tok_3f9a') }, 'no bearer token'],
    ['no header, basic', basic, {}, 'bad basic credentials'],
    ['another username', basic, { authorization: basicAuth('admin', 'pa:ss w0rd') }, 'bad basic credentials'],
    ['another password', basic, { authorization: basicAuth('authentik', 'pa:ss') }, 'bad basic credentials'],
    ['Bearer sent to a basic hook', basic, { authorization: 'Bearer pa:ss w0rd' }, 'bad basic credentials'],
    ['no secret configured', hookSettings('authentik', undefined), { authorization: 'Bearer ' }, 'hook credentials not configured'],
  ]
  for (const [name, settings, headers, reason] of refused) {
    test(`refused: ${name}`, () => {
      expect(authentikHook.authenticate(hookRequest(CURRENT, { ...JSON_HEADERS, ...headers }), settings)).toEqual({ ok: false, reason })
    })
  }
})

describe('authentik: the message', () => {
  test('Message, the whole text, is delivered as given', () => {
    expect(authentikHook.parse(hookRequest(CURRENT), bearer)).toEqual({
      ok: true,
      message: { channel: 'sms', recipient: '+4915112345678', text: 'Use this code to authenticate in authentik: 482913' },
    })
  })

  test('a translated Message arrives with \\u escapes and is delivered in its language', () => {
    const parsed = authentikHook.parse(hookRequest(GERMAN), bearer)
    expect(parsed.ok && parsed.message.text).toBe('Verwenden Sie diesen Code für authentik: 482913')
  })

  test('Body alone is the token: otpd writes the text from its catalogue', () => {
    expect(authentikHook.parse(hookRequest(TOKEN_ONLY), bearer)).toEqual({ ok: true, message: { channel: 'sms', recipient: '+4915112345678', code: '482913' } })
  })

  test("a webhook mapping's lower-case keys, with a text in body, deliver that text", () => {
    expect(authentikHook.parse(hookRequest(MAPPED), bearer)).toEqual({
      ok: true,
      message: { channel: 'sms', recipient: '+4915112345678', text: 'foo bar baz 482913' },
    })
  })

  test('invalid: not JSON, no To, no Body', () => {
    expect(authentikHook.parse(hookRequest('From=x&To=y'), bearer)).toEqual({ ok: false, reason: 'body is not a JSON object' })
    expect(authentikHook.parse(hookRequest('{"From": "x", "Body": "482913"}'), bearer)).toEqual({ ok: false, reason: 'To is missing' })
    expect(authentikHook.parse(hookRequest('{"To": "+4915112345678"}'), bearer)).toEqual({ ok: false, reason: 'Body is missing' })
  })
})

describe('authentik: the answers', () => {
  test('a refusal is the plain message, which authentik shows its user', () => {
    expect(authentikHook.refused({ kind: 'no_credits', message: 'The account has no credits left' })).toEqual({
      status: 402,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: 'The account has no credits left',
    })
    expect(authentikHook.refused({ kind: 'rate_limited', message: 'Too many codes', retryAfter: 30 }).headers).toMatchObject({ 'retry-after': '30' })
  })

  test('accepted is 200 (authentik fails on 400 and above)', () => {
    expect(authentikHook.accepted('ver_9').status).toBe(200)
  })
})
