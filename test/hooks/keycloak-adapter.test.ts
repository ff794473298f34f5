/**
 * The keycloak adapter against what the sms-authenticator plugin's
 * `ApiSmsService` sends (docs/integrations.md#keycloak). Its JSON is written
 * by hand (`{"text":"...","to":"...","from":"..."}`, no spaces, nothing
 * escaped); its form by `URLEncoder` (space as `+`), and with no token
 * attribute it starts with `=<apitoken>&`, as the plugin writes it.
 */
import { describe, expect, test } from 'bun:test'
import { keycloakHook } from '../../src/hooks/keycloak.ts'
import { basicAuth, hookRequest, hookSettings } from './gateway-request.ts'

const TEXT = 'Your SMS code is 482913 and is valid for 5 minutes.'
const JSON_BODY = `{"text":"${TEXT}","to":"+4915112345678","from":"Keycloak"}`
const FORM_BODY = '=changeme&text=Your+SMS+code+is+482913+and+is+valid+for+5+minutes.&to=%2B4915112345678&from=Keycloak'
const JSON_TYPE = { 'content-type': 'application/json' }
const FORM_TYPE = { 'content-type': 'application/x-www-form-urlencoded' }

const headerHook = hookSettings('keycloak', 'Bearer kc_7d1e', {})
const message = { channel: 'sms' as const, recipient: '+4915112345678', text: TEXT }

describe('keycloak: the token', () => {
  test('header mode: Authorization carries the API secret exactly as typed in the plugin', () => {
    expect(keycloakHook.authenticate(hookRequest(JSON_BODY, { ...JSON_TYPE, authorization: 'Bearer kc_7d1e' }), headerHook)).toEqual({ ok: true })
    expect(keycloakHook.authenticate(hookRequest(JSON_BODY, { ...JSON_TYPE, authorization: 'kc_7d1e' }), headerHook)).toEqual({
      ok: false,
      reason: 'bad token header',
    })
    expect(keycloakHook.authenticate(hookRequest(JSON_BODY, JSON_TYPE), headerHook)).toEqual({ ok: false, reason: 'no token header' })
  })

  test('header mode with the header the plugin names by `apitokenattribute`', () => {
    const named = hookSettings('keycloak', 'kc_7d1e', { token_header: 'X-Api-Key' })
    expect(keycloakHook.authenticate(hookRequest(JSON_BODY, { ...JSON_TYPE, 'x-api-key': 'kc_7d1e' }), named)).toEqual({ ok: true })
    expect(keycloakHook.authenticate(hookRequest(JSON_BODY, { ...JSON_TYPE, authorization: 'kc_7d1e' }), named)).toEqual({
      ok: false,
      reason: 'no token header',
    })
  })

  test('basic mode: apiuser and apitoken', () => {
    const basic = hookSettings('keycloak', 'kc_7d1e', { auth: 'basic', username: 'keycloak' })
    expect(keycloakHook.authenticate(hookRequest(JSON_BODY, { ...JSON_TYPE, authorization: basicAuth('keycloak', 'kc_7d1e') }), basic)).toEqual({ ok: true })
    expect(keycloakHook.authenticate(hookRequest(JSON_BODY, { ...JSON_TYPE, authorization: basicAuth('keycloak', 'kc_7d1f') }), basic).ok).toBe(false)
  })

  test('attribute mode: the token is a body field, in JSON (written first) or in a form', () => {
    const attribute = hookSettings('keycloak', 'kc_7d1e', { auth: 'attribute', token_attribute: 'apikey' })
    const json = `{"apikey":"kc_7d1e","text":"${TEXT}","to":"+4915112345678","from":"Keycloak"}`
    const form = `apikey=kc_7d1e&${FORM_BODY.slice('=changeme&'.length)}`
    expect(keycloakHook.authenticate(hookRequest(json, JSON_TYPE), attribute)).toEqual({ ok: true })
    expect(keycloakHook.authenticate(hookRequest(form, FORM_TYPE), attribute)).toEqual({ ok: true })
    expect(keycloakHook.authenticate(hookRequest(json.replace('kc_7d1e', 'kc_0000'), JSON_TYPE), attribute)).toEqual({
      ok: false,
      reason: 'bad token attribute',
    })
    expect(keycloakHook.authenticate(hookRequest(JSON_BODY, JSON_TYPE), attribute)).toEqual({ ok: false, reason: 'bad token attribute' })
  })

  test('no secret configured: refused', () => {
    expect(keycloakHook.authenticate(hookRequest(JSON_BODY, { authorization: '' }), hookSettings('keycloak', undefined)).ok).toBe(false)
  })
})

describe('keycloak: the message', () => {
  test("the plugin's default JSON: the whole text as given", () => {
    expect(keycloakHook.parse(hookRequest(JSON_BODY, JSON_TYPE), headerHook)).toEqual({ ok: true, message })
  })

  test('"URL encode data": the same message from the form', () => {
    expect(keycloakHook.parse(hookRequest(FORM_BODY, FORM_TYPE), headerHook)).toEqual({ ok: true, message })
  })

  test('renamed attributes, a receiver template of a list, and the message UUID as the delivery id', () => {
    const renamed = hookSettings('keycloak', 'k', { message_attribute: 'message', receiver_attribute: 'recipients', uuid_attribute: 'id' })
    const body = `{"id":"5d0b8f0e-3f43-4b8e-9f7c-0d1c2b3a4e5f","message":"${TEXT}","recipients":["+4915112345678"],"sender":"Keycloak"}`
    expect(keycloakHook.parse(hookRequest(body, JSON_TYPE), renamed)).toEqual({
      ok: true,
      message: { ...message, deliveryId: '5d0b8f0e-3f43-4b8e-9f7c-0d1c2b3a4e5f' },
    })
  })

  test('a number the plugin leaves as typed (no default country prefix), 00 and spaces, is read in E.164', () => {
    const parsed = keycloakHook.parse(hookRequest('{"text":"x","to":"0049 151 12345678","from":"Keycloak"}', JSON_TYPE), headerHook)
    expect(parsed.ok && parsed.message.recipient).toBe('+4915112345678')
  })

  test('invalid: a text with a quote the plugin did not escape, a missing receiver or message', () => {
    expect(keycloakHook.parse(hookRequest('{"text":"Say "hi" 482913","to":"+4915112345678","from":"Keycloak"}', JSON_TYPE), headerHook)).toEqual({
      ok: false,
      reason: 'body is not a JSON object',
    })
    expect(keycloakHook.parse(hookRequest(`{"text":"${TEXT}","from":"Keycloak"}`, JSON_TYPE), headerHook)).toEqual({
      ok: false,
      reason: 'receiver attribute is missing',
    })
    expect(keycloakHook.parse(hookRequest('to=%2B4915112345678&from=Keycloak', FORM_TYPE), headerHook)).toEqual({
      ok: false,
      reason: 'message attribute is missing',
    })
  })
})

describe('keycloak: the answers', () => {
  test('a refusal is the plain message, which the plugin writes to Keycloak’s log', () => {
    expect(keycloakHook.refused({ kind: 'blocked', message: 'Sending to this country is blocked' })).toEqual({
      status: 403,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: 'Sending to this country is blocked',
    })
  })
})
