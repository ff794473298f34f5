/**
 * `[hooks.NAME]` as `otpd config check` and `serve` check it
 * (docs/integrations.md#the-hooks-table): every problem named by its key, in
 * one run, and a secret's value never in a message.
 */
import { describe, expect, test } from 'bun:test'
import { resolveConfig } from '../../src/app/load-config.ts'
import { configProblems } from '../kit/config.ts'
import { supabaseSecret } from './supabase-build.ts'

const SECRET = supabaseSecret()
const problemsOf = (hooks: Record<string, unknown>, env: Record<string, string> = { HOOK_SECRET: SECRET }, extra: Record<string, unknown> = {}) =>
  configProblems(() => resolveConfig({ ...extra, hooks }, 'test', env))
const supabase = (over: Record<string, unknown> = {}) => ({ type: 'supabase', account: 'default', secret_env: 'HOOK_SECRET', ...over })

describe('hooks in the config', () => {
  test('a complete table passes, with its channels naming defined providers', () => {
    const providers = { sms_gw: { type: 'webhook', url: 'https://gw.example/otp', secret_env: 'GW_SECRET' } }
    const env = { HOOK_SECRET: SECRET, GW_SECRET: 's'.repeat(32) }
    expect(
      problemsOf({ supabase: supabase({ channels: { sms: ['sms_gw'] }, requests_per_minute: 30, code_lifetime_seconds: 300 }) }, env, { providers }),
    ).toEqual([])
  })

  const cases: [string, Record<string, unknown>, Record<string, string>, string[]][] = [
    ['an unknown type', { a: supabase({ type: 'okta' }) }, { HOOK_SECRET: SECRET }, ['hooks.a.type']],
    ['no account', { a: { type: 'supabase', secret_env: 'HOOK_SECRET' } }, { HOOK_SECRET: SECRET }, ['hooks.a.account']],
    [
      'no secret_env',
      { a: { type: 'supabase', account: 'default' } },
      {},
      ["hooks.a.secret_env is missing: the variable holding the hook's secret (v1,whsec_...)"],
    ],
    ['its variable unset', { a: supabase() }, {}, ['hooks.a.secret_env names HOOK_SECRET, which is not set']],
    ['its variable empty', { a: supabase() }, { HOOK_SECRET: '' }, ['hooks.a.secret_env names HOOK_SECRET, which is empty']],
    [
      'a secret that is not v1,whsec_',
      { a: supabase() },
      { HOOK_SECRET: 'hunter2-not-a-secret' },
      ['hooks.a.secret_env: its variable does not hold a Standard Webhooks secret as Supabase gives it (v1,whsec_<base64>)'],
    ],
    ['a key of no hook type', { a: supabase({ audience: 'x' }) }, { HOOK_SECRET: SECRET }, ["hooks.a.audience is not a setting of a 'supabase' hook"]],
    [
      'channels naming an undefined provider',
      { a: supabase({ channels: { sms: ['nope'] } }) },
      { HOOK_SECRET: SECRET },
      ["hooks.a.channels.sms names provider 'nope', which is not defined"],
    ],
    [
      'a name that is no path segment',
      { 'My Hook': supabase() },
      { HOOK_SECRET: SECRET },
      ["hooks.My Hook: a hook's name must be 1-63 lower-case letters, digits, '-' or '_' (it is the path /hooks/NAME)"],
    ],
    ['a code lifetime under a minute', { a: supabase({ code_lifetime_seconds: 30 }) }, { HOOK_SECRET: SECRET }, ['hooks.a.code_lifetime_seconds']],
  ]
  for (const [name, hooks, env, expected] of cases) {
    test(name, () => {
      const problems = problemsOf(hooks, env)
      expect(problems).toHaveLength(expected.length)
      for (const [i, e] of expected.entries()) expect(problems[i]).toStartWith(e)
      for (const p of problems) expect(p).not.toContain('hunter2')
    })
  }

  test('every hook is checked in one run', () => {
    expect(problemsOf({ a: supabase({ audience: 'x' }), b: supabase({ secret_env: 'OTHER' }) })).toEqual([
      "hooks.a.audience is not a setting of a 'supabase' hook",
      'hooks.b.secret_env names OTHER, which is not set',
    ])
  })
})
