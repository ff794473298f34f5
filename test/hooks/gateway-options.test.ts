/**
 * The own settings of the auth0, authentik, keycloak and kratos hook types
 * (docs/integrations.md): each problem a sentence naming its key. Through
 * `otpd config check`, with unknown keys and `secret_env`, in gateway-config.test.ts.
 */
import { expect, test } from 'bun:test'
import { gatewayOptionProblems } from '../../src/hooks/gateway-options.ts'

test('the documented tables have no problem', () => {
  expect(gatewayOptionProblems('a', 'auth0', { audience: 'urn:otpd', subject: 'urn:Auth0', secret_base64: false })).toEqual([])
  expect(gatewayOptionProblems('b', 'authentik', { auth: 'basic', username: 'authentik' })).toEqual([])
  expect(gatewayOptionProblems('c', 'keycloak', { auth: 'attribute', token_attribute: 'apikey', uuid_attribute: 'id' })).toEqual([])
  expect(gatewayOptionProblems('d', 'kratos', {})).toEqual([])
})

test('auth0 needs its audience and subject', () => {
  expect(gatewayOptionProblems('a', 'auth0', {})).toEqual([
    "hooks.a.audience is missing: the connection's gateway_authentication.audience, the token's aud",
    "hooks.a.subject is missing: the connection's gateway_authentication.subject, the token's sub",
  ])
})

test('a username where Basic is chosen, a token attribute in attribute mode', () => {
  expect(gatewayOptionProblems('b', 'authentik', { auth: 'basic' })).toEqual([
    'hooks.b.username is missing: the stage\'s API Auth field, the Basic username (auth = "basic")',
  ])
  expect(gatewayOptionProblems('c', 'keycloak', { auth: 'attribute' })).toEqual([
    'hooks.c.token_attribute is missing: the body field holding the API secret (auth = "attribute")',
  ])
  expect(gatewayOptionProblems('d', 'kratos', { auth: 'basic_auth' })).toEqual([
    'hooks.d.username is missing: request_config.auth.config.user (auth = "basic_auth")',
  ])
})

test('a wrong value and a wrong type', () => {
  expect(gatewayOptionProblems('d', 'kratos', { auth: 'bearer', header: 7 })).toEqual([
    'hooks.d.auth must be one of: api_key, basic_auth (got "bearer")',
    'hooks.d.header must be a string (got 7)',
  ])
  expect(gatewayOptionProblems('a', 'auth0', { audience: 'u', subject: 's', secret_base64: 'yes' })).toEqual([
    'hooks.a.secret_base64 must be a boolean (got "yes")',
  ])
})
