/**
 * `otpd hooks list` (docs/integrations.md#listing-hooks): each configured hook
 * with its type, account, URL (from server.public_url) and last use, which a
 * request to the running server sets; `--json` for scripts. `otpd config
 * check` refuses a hook whose secret is missing from the environment.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { cliEnv, startServer } from '../kit/cli.ts'

setDefaultTimeout(60_000)

const AUTHORIZATION = 'Bearer 6b1f0f5cfa2e4e1e9d8d3f0a4c2b7e91'
const TOML = `[server]
public_url = "https://otp.example.com"

[hooks.logto]
type = "logto"
account = "default"
secret_env = "LOGTO_HOOK_AUTHORIZATION"

[hooks.zitadel]
type = "zitadel"
account = "acme"
secret_env = "ZITADEL_SIGNING_KEY"
`
const ENV = { LOGTO_HOOK_AUTHORIZATION: AUTHORIZATION, ZITADEL_SIGNING_KEY: 'k'.repeat(32) }

test('lists each hook with its URL, never used until a request reaches it', async () => {
  const env = await cliEnv(TOML, ENV)
  const before = env.run('hooks', 'list')
  expect(before.code).toBe(0)
  expect(before.stdout).toBe(
    'NAME     TYPE     ACCOUNT  URL                                    LAST USED\n' +
      'logto    logto    default  https://otp.example.com/hooks/logto    never\n' +
      'zitadel  zitadel  acme     https://otp.example.com/hooks/zitadel  never\n',
  )
  expect(env.json('hooks', 'list')).toEqual([
    { name: 'logto', type: 'logto', account: 'default', url: 'https://otp.example.com/hooks/logto', last_used_at: null },
    { name: 'zitadel', type: 'zitadel', account: 'acme', url: 'https://otp.example.com/hooks/zitadel', last_used_at: null },
  ])

  expect(env.run('credits', 'add', '5').code).toBe(0)
  const server = await startServer(env)
  const r = await fetch(`${server.url}/hooks/logto`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: AUTHORIZATION },
    body: JSON.stringify({ to: '14155550123', type: 'SignIn', payload: { code: '482913' } }),
  })
  expect(r.status).toBe(200)
  await server.stop()
  const [logto, zitadel] = env.json('hooks', 'list')
  expect(Date.parse(logto.last_used_at)).toBeGreaterThan(Date.now() - 60_000)
  expect(zitadel.last_used_at).toBeNull()
  // The request log of the running server named the hook, never the number.
  expect(server.output()).toContain('"hook":"logto"')
  expect(server.output()).not.toContain('4155550123')
})

test('with no [hooks] table, says how to add one', async () => {
  const env = await cliEnv()
  expect(env.run('hooks', 'list').stdout).toBe('none yet: add a [hooks.NAME] table to the config (docs/integrations.md)\n')
  expect(env.json('hooks', 'list')).toEqual([])
})

test('otpd config check names a hook secret missing from the environment', async () => {
  const env = await cliEnv(TOML, { LOGTO_HOOK_AUTHORIZATION: AUTHORIZATION })
  const r = env.run('config', 'check')
  expect(r.code).toBe(1)
  expect(r.stderr).toContain('hooks.zitadel.secret_env names ZITADEL_SIGNING_KEY, which is not set')
  expect(r.stderr).toContain('missing from this environment: ZITADEL_SIGNING_KEY')
})
