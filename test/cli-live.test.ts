/**
 * The CLI and a running server on one database: credits added and keys
 * disabled from the CLI take effect at once, with no 500 and no restart.
 */
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test'
import { cliEnv, post, startServer, type CliEnv, type RunningServer } from './cli-helpers.ts'

// These tests start `otpd` processes; bunfig.toml cannot raise bun's 5 s default per file.
setDefaultTimeout(30_000)

let env: CliEnv
let server: RunningServer | undefined
afterEach(async () => {
  await server?.stop()
  server = undefined
  env?.close()
})


test('credits and key status change from the CLI while the server takes traffic', async () => {
  env = cliEnv('[limits]\nkey_requests_per_minute = 100000\nrecipient_per_minute = 100000\nrecipient_per_hour = 100000\nrecipient_per_day = 100000\n')
  const load = env.json('keys', 'create', '--name', 'load').key
  const victim = env.json('keys', 'create', '--name', 'victim').key
  server = await startServer(env)
  const url = server.url

  // Steady background traffic: test-recipient sends and verifies (no credit needed).
  const statuses: number[] = []
  let running = true
  const traffic = (async () => {
    let i = 0
    while (running) {
      const s = await post(url, '/api/v1/send', load, { channel: 'sms', recipient: '+15550100001' })
      statuses.push(s.status)
      const v = await post(url, '/api/v1/verify', load, { verification_id: s.json.verification_id, code: i++ % 2 ? '123456' : '000000' })
      statuses.push(v.status)
    }
  })()

  // No credits yet: a real send is refused.
  expect((await post(url, '/api/v1/send', victim, { channel: 'sms', recipient: '+14155550101' })).status).toBe(402)
  expect((await env.runAsync('credits', 'add', '3')).code).toBe(0)
  const paid = await post(url, '/api/v1/send', victim, { channel: 'sms', recipient: '+14155550101' })
  expect(paid.status).toBe(200)
  expect(env.json('credits', 'balance').balance).toBe(2)

  expect((await env.runAsync('keys', 'disable', victim.slice(5, 13))).code).toBe(0)
  const disabled = await post(url, '/api/v1/send', victim, { channel: 'sms', recipient: '+14155550102' })
  expect(disabled).toMatchObject({ status: 403, json: { error: 'API key is disabled' } })
  expect((await env.runAsync('keys', 'enable', victim.slice(5, 13))).code).toBe(0)
  expect((await post(url, '/api/v1/send', victim, { channel: 'sms', recipient: '+14155550102' })).status).toBe(200)

  // More CLI writes while traffic flows.
  for (let i = 0; i < 5; i++) expect((await env.runAsync('keys', 'create', '--name', `k${i}`)).code).toBe(0)
  expect((await env.runAsync('credits', 'add', '10')).code).toBe(0)

  running = false
  await traffic
  expect(statuses.length).toBeGreaterThan(20)
  expect(statuses.filter((s) => s >= 500)).toEqual([])
  expect(env.json('credits', 'balance').balance).toBe(11)
  // The log provider printed the real sends; nothing else leaked the key.
  expect(server.output()).not.toContain(victim)
  expect(server.output()).not.toContain(load)
}, 20_000) // ten CLI processes of ~0.4 s each: over bun's 5 s default on a busy machine

test('a second server on a port in use exits 1 with one line', async () => {
  env = cliEnv()
  server = await startServer(env)
  const r = await env.runAsync('serve', '--listen', server.url.replace('http://', ''))
  expect(r.code).toBe(1)
  expect(r.stderr).toMatch(/^otpd: error: Failed to start server\. Is port \d+ in use\?\n$/)
})
