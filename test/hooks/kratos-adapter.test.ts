/**
 * The kratos adapter against what Kratos's HTTP courier sends through the
 * Jsonnet body of docs/integrations.md#ory-kratos. fixtures/kratos/ctx-*.txt are
 * Kratos's template data as its courier encodes them (courier/http_channel.go,
 * the models of courier/template/{sms,email}); out-*.txt are the bytes the
 * Jsonnet evaluator (jsonnet v0.18.0) made from them with body.jsonnet.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { kratosHook } from '../../src/hooks/kratos.ts'
import { basicAuth, hookRequest, hookSettings } from './gateway-request.ts'
import { KRATOS_BODY_JSONNET, kratosBody, kratosContext, kratosOutput } from './kratos-jsonnet.ts'

const CASES = ['sms-login-code', 'sms-recovery-code', 'email-verification-code', 'email-recovery-link', 'sms-address-changed']
const apiKey = hookSettings('kratos', 'Bearer kr_51c0', {})
const JSON_TYPE = { 'content-type': 'application/json' }

describe('kratos: the documented Jsonnet body', () => {
  test('docs/integrations.md gives body.jsonnet word for word', () => {
    const docs = readFileSync(join(import.meta.dir, '..', '..', 'docs', 'integrations.md'), 'utf8')
    expect(docs).toContain(`\`\`\`jsonnet\n${KRATOS_BODY_JSONNET}\`\`\``)
  })

  for (const name of CASES) {
    test(`the reproduction gives the evaluator's bytes: ${name}`, () => {
      expect(kratosBody(kratosContext(name))).toBe(kratosOutput(name))
    })
  }
})

describe('kratos: request_config.auth', () => {
  test('api_key: the header and value set on both sides (Authorization by default)', () => {
    const body = kratosOutput('sms-login-code')
    expect(kratosHook.authenticate(hookRequest(body, { ...JSON_TYPE, authorization: 'Bearer kr_51c0' }), apiKey)).toEqual({ ok: true })
    expect(kratosHook.authenticate(hookRequest(body, { ...JSON_TYPE, authorization: 'Bearer kr_51c1' }), apiKey)).toEqual({ ok: false, reason: 'bad api key' })
    expect(kratosHook.authenticate(hookRequest(body, JSON_TYPE), apiKey)).toEqual({ ok: false, reason: 'no api key header' })
    const named = hookSettings('kratos', 'kr_51c0', { header: 'X-Otpd-Key' })
    expect(kratosHook.authenticate(hookRequest(body, { ...JSON_TYPE, 'x-otpd-key': 'kr_51c0' }), named)).toEqual({ ok: true })
  })

  test('basic_auth: user and password', () => {
    const basic = hookSettings('kratos', 'kr_51c0', { auth: 'basic_auth', username: 'kratos' })
    const body = kratosOutput('sms-login-code')
    expect(kratosHook.authenticate(hookRequest(body, { authorization: basicAuth('kratos', 'kr_51c0') }), basic)).toEqual({ ok: true })
    expect(kratosHook.authenticate(hookRequest(body, { authorization: basicAuth('kratos', 'kr_51c1') }), basic)).toEqual({
      ok: false,
      reason: 'bad basic credentials',
    })
  })
})

describe('kratos: the message', () => {
  const parse = (name: string) => kratosHook.parse(hookRequest(kratosOutput(name), JSON_TYPE), apiKey)

  test('an SMS login code: the code, for otpd to write in its catalogue text', () => {
    expect(parse('sms-login-code')).toEqual({ ok: true, message: { channel: 'sms', recipient: '+4915112345678', code: '482913' } })
  })

  test('an SMS recovery code, which Kratos keeps under verification_code', () => {
    expect(parse('sms-recovery-code')).toEqual({ ok: true, message: { channel: 'sms', recipient: '+4915112345678', code: '730164' } })
  })

  test('an email verification code', () => {
    expect(parse('email-verification-code')).toEqual({ ok: true, message: { channel: 'email', recipient: 'ada@example.com', code: '215588' } })
  })

  test('an email recovery link has no code: its subject and text as Kratos wrote them', () => {
    expect(parse('email-recovery-link')).toEqual({
      ok: true,
      message: {
        channel: 'email',
        recipient: 'ada@example.com',
        subject: 'Recover access to your account',
        text: 'Recover access to your account by clicking the following link:\n\nhttps://auth.example.com/self-service/recovery?token=Xy7&flow=8d2e\n\nIf this was not you, do nothing. This link expires in 60 minutes.\n',
      },
    })
  })

  test('an SMS notice without a code: its text as given', () => {
    expect(parse('sms-address-changed')).toEqual({
      ok: true,
      message: { channel: 'sms', recipient: '+4915112345678', text: "An address on your account was changed. If this wasn't you, contact support.\n" },
    })
  })

  test('a `locale` added to the Jsonnet picks the language of the text', () => {
    const body = kratosOutput('sms-login-code').replace('"message_type"', '"locale": "de",\n   "message_type"')
    expect(kratosHook.parse(hookRequest(body, JSON_TYPE), apiKey)).toEqual({
      ok: true,
      message: { channel: 'sms', recipient: '+4915112345678', code: '482913', locale: 'de' },
    })
  })

  test('invalid: not JSON, no recipient, neither code nor body', () => {
    expect(kratosHook.parse(hookRequest('recipient=x'), apiKey)).toEqual({ ok: false, reason: 'body is not a JSON object' })
    expect(kratosHook.parse(hookRequest('{"body":"x"}'), apiKey)).toEqual({ ok: false, reason: 'recipient is missing' })
    expect(kratosHook.parse(hookRequest('{"recipient":"+4915112345678","template_type":"stub","template_data":{ }}'), apiKey)).toEqual({
      ok: false,
      reason: 'neither a code nor a body',
    })
  })
})

describe('kratos: the answers', () => {
  test('a refusal is the plain message, which the courier logs before it retries the message', () => {
    expect(kratosHook.refused({ kind: 'unavailable', message: 'No provider could take the message', retryAfter: 5 })).toEqual({
      status: 503,
      headers: { 'content-type': 'text/plain; charset=utf-8', 'retry-after': '5' },
      body: 'No provider could take the message',
    })
  })
})
