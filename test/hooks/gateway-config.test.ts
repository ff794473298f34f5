/**
 * `[hooks.NAME]` of the auth0, authentik, keycloak and kratos types as
 * `otpd config check` and `serve` check them (docs/integrations.md): the
 * tables docs/integrations.md shows pass; each problem is named by its key.
 */
import { expect, test } from 'bun:test'
import { resolveConfig } from '../../src/app/load-config.ts'
import { configProblems } from '../kit/config.ts'

const ENV = { HOOK_SECRET: 'a-shared-secret-0123456789' }
const problemsOf = (table: Record<string, unknown>) => configProblems(() => resolveConfig({ hooks: { h: { account: 'default', ...table } } }, 'test', ENV))

test('the documented tables pass', () => {
  const tables = [
    { type: 'auth0', secret_env: 'HOOK_SECRET', audience: 'urn:otpd', subject: 'urn:Auth0', secret_base64: false },
    { type: 'authentik', secret_env: 'HOOK_SECRET', auth: 'basic', username: 'authentik' },
    {
      type: 'keycloak',
      secret_env: 'HOOK_SECRET',
      auth: 'header',
      token_header: 'X-Api-Key',
      message_attribute: 'text',
      receiver_attribute: 'to',
      uuid_attribute: 'id',
    },
    { type: 'kratos', secret_env: 'HOOK_SECRET', auth: 'api_key', header: 'Authorization' },
  ]
  for (const table of tables) expect(problemsOf(table)).toEqual([])
})

test('each problem of a table, in one run', () => {
  expect(problemsOf({ type: 'auth0', audience: 'urn:otpd', token_header: 'x' })).toEqual([
    "hooks.h.token_header is not a setting of a 'auth0' hook",
    "hooks.h.secret_env is missing: the variable holding the connection's gateway_authentication.secret",
    "hooks.h.subject is missing: the connection's gateway_authentication.subject, the token's sub",
  ])
  expect(problemsOf({ type: 'keycloak', secret_env: 'HOOK_SECRET', auth: 'attribute' })).toEqual([
    'hooks.h.token_attribute is missing: the body field holding the API secret (auth = "attribute")',
  ])
  expect(problemsOf({ type: 'kratos', secret_env: 'HOOK_SECRET', auth: 'bearer' })).toEqual(['hooks.h.auth must be one of: api_key, basic_auth (got "bearer")'])
})
