/**
 * The CLI and a running server on one database: credits added from the CLI
 * take effect at once, keys disabled or enabled within 1 s, with no 500 and no
 * restart.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { afterTest } from '../kit/cleanup.ts'
import { cliEnv, post, startServer, type CliEnv, type RunningServer } from '../kit/cli.ts'

// These tests start `otpd` processes; bunfig.toml cannot raise bun's 5 s default per file.
setDefaultTimeout(30_000)

/** The documented 1 s, plus room for one request's round trip on a loaded test machine. */
const BOUND_MS = 1_000 + 400

/** Calls `request` every 20 ms until `done` holds; returns that result and the time it took. */
async function pollUntil<T>(request: () => Promise<T>, done: (r: T) => boolean): Promise<{ result: T; ms: number }> {
  const t0 = performance.now()
  for (;;) {
    const result = await request()
    if (done(result) || performance.now() - t0 > 5_000) return { result, ms: performance.now() - t0 }
    await Bun.sleep(20)
  }
}

let env: CliEnv
let server: RunningServer | undefined

test('credits and key status change from the CLI while the server takes traffic', async () => {
  env = await cliEnv(
    '[limits]\nkey_requests_per_minute = 100000\nrecipient_per_minute = 100000\nrecipient_per_hour = 100000\nrecipient_per_day = 100000\n[fraud]\nmode = "off"\n',
  )
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

  // Key status from another process takes effect within 1 s (the server caches key look-ups for 1 s).
  // Polled with a verify of an unknown id: 404 while the key works, and it spends nothing.
  const probe = () => post(url, '/api/v1/verify', victim, { verification_id: '00000000-0000-4000-8000-000000000000', code: '123456' })
  expect((await env.runAsync('keys', 'disable', victim.slice(5, 13))).code).toBe(0)
  const disabled = await pollUntil(probe, (r) => r.status !== 404)
  expect(disabled.result).toMatchObject({ status: 403, json: { error: 'API key is disabled' } })
  expect(disabled.ms).toBeLessThanOrEqual(BOUND_MS)
  expect((await post(url, '/api/v1/send', victim, { channel: 'sms', recipient: '+14155550102' })).status).toBe(403)
  expect((await env.runAsync('keys', 'enable', victim.slice(5, 13))).code).toBe(0)
  const enabled = await pollUntil(probe, (r) => r.status !== 403)
  expect(enabled.result.status).toBe(404)
  expect(enabled.ms).toBeLessThanOrEqual(BOUND_MS)
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
}, 30_000)

test('a second server on a port in use exits 1 with one line', async () => {
  env = await cliEnv()
  server = await startServer(env)
  const r = await env.runAsync('serve', '--listen', server.url.replace('http://', ''))
  expect(r.code).toBe(1)
  // A bind error names the address and the real cause.
  const address = server.url.replace('http://', '')
  expect(r.stderr).toBe(
    `otpd: error: cannot listen on ${address} (server.listen): the address is already in use (another otpd, or another program) [EADDRINUSE]\n`,
  )
})

test('a second server whose admin address is taken never says it listens, for the API either: one error line', async () => {
  const taken = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  afterTest(() => taken.stop(true))
  const api = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const apiAddress = `127.0.0.1:${api.port}`
  api.stop(true)
  env = await cliEnv(`[server]\nadmin_listen = "127.0.0.1:${taken.port}"\n`)
  const r = await env.runAsync('serve', '--listen', apiAddress)
  expect(r.code).toBe(1)
  expect(r.stdout).not.toContain('listening')
  expect(r.stderr).toBe(
    `otpd: error: cannot listen on 127.0.0.1:${taken.port} (server.admin_listen): the address is already in use (another otpd, or another program) [EADDRINUSE]\n`,
  )
})
