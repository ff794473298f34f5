/**
 * A reload says what changed (docs/operating.md#reload): the names of the
 * settings, and of the variables the config names, never their values.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { changedSettings, changedVariables } from '../../src/app/reload.ts'
import { resolveConfig } from '../../src/config/load.ts'
import { cliEnv, startServer } from '../kit/cli.ts'

setDefaultTimeout(30_000)

const TOKEN_A = 'metrics-token-before-0123456789abcdef'
const TOKEN_B = 'metrics-token-after-0123456789abcdefgh'

test('changedSettings names the keys that differ, a table added or removed once, and nothing when nothing differs', () => {
  const before = resolveConfig({ limits: { recipient_per_minute: 2 }, providers: { old: { type: 'log' } }, channels: { sms: ['old'] } })
  const after = resolveConfig({
    limits: { recipient_per_minute: 3 },
    server: { metrics_token: TOKEN_B },
    providers: { old: { type: 'noop' }, added: { type: 'log' } },
    channels: { sms: ['old', 'added'] },
  })
  expect(changedSettings(before, after)).toEqual([
    'channels.sms',
    'limits.recipient_per_minute',
    'providers.added',
    'providers.old.type',
    'server.metrics_token',
  ])
  expect(changedSettings(after, after)).toEqual([])
})

test('changedVariables names the variables the config names whose value changed, and no other', () => {
  const config = resolveConfig({ server: { secret_env: 'OTPD_SECRET' } }, 'test', { OTPD_SECRET: 's'.repeat(40) })
  expect(changedVariables(config, { OTPD_SECRET: 's'.repeat(40), OTHER: 'a' }, { OTPD_SECRET: 't'.repeat(40), OTHER: 'b' })).toEqual(['OTPD_SECRET'])
  expect(changedVariables(config, { OTPD_SECRET: 's'.repeat(40) }, { OTPD_SECRET: 's'.repeat(40) })).toEqual([])
})

test('SIGHUP logs the names of the changed settings, never their values', async () => {
  const env = await cliEnv(`[server]\nmetrics_token = "${TOKEN_A}"\n[limits]\nrecipient_per_minute = 2\n`)
  const server = await startServer(env)
  writeFileSync(env.configFile, env.configText(`[server]\nmetrics_token = "${TOKEN_B}"\n[limits]\nrecipient_per_minute = 3\n`))
  server.proc.kill('SIGHUP')
  const deadline = Date.now() + 10_000
  while (!server.output().includes('configuration reloaded') && Date.now() < deadline) await Bun.sleep(20)
  const line = server
    .output()
    .split('\n')
    .find((l) => l.includes('configuration reloaded'))!
  expect(JSON.parse(line)).toMatchObject({ level: 'info', msg: 'configuration reloaded', changed: ['limits.recipient_per_minute', 'server.metrics_token'] })
  expect(server.output()).not.toContain(TOKEN_A)
  expect(server.output()).not.toContain(TOKEN_B)
})
