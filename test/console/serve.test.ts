/**
 * `otpd serve` with the console (docs/console.md#enabling-the-console): it
 * prints the console's URL at start, serves it on the admin listener over a
 * real socket (the client's address from the connection), and not on the
 * API listener; with `[console] enabled = false` it does neither. A SIGTERM
 * ends it promptly, the workflows page's read thread started or not.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { cliEnv, startServer } from '../kit/cli.ts'

setDefaultTimeout(60_000)

async function consoleUrl(output: () => string): Promise<string | undefined> {
  for (let i = 0; i < 100; i++) {
    const m = /otpd console at (http:\/\/[0-9.]+:[0-9]+\/console\/)/.exec(output())
    if (m) return m[1]
    if (/otpd admin listening on/.test(output()) && i > 20) return undefined
    await Bun.sleep(50)
  }
  return undefined
}

test('serve prints the console URL; the admin listener serves it, the API listener answers 404', async () => {
  const env = await cliEnv('[server]\nadmin_listen = "127.0.0.1:0"\n')
  expect(env.runWithInput('a long enough password\n', 'operators', 'add', 'alice', '--password-stdin').code).toBe(0)
  const server = await startServer(env)
  const url = await consoleUrl(server.output)
  expect(url).toBeDefined()
  const page = await fetch(url!, { redirect: 'manual' })
  expect(page.status).toBe(303)
  expect(page.headers.get('location')).toStartWith('/console/sign-in')
  const signIn = await fetch(new URL('/console/api/session', url), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'alice', password: 'a long enough password' }),
  })
  expect(signIn.status).toBe(200)
  const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!
  const me = await fetch(new URL('/console/api/session', url), { headers: { cookie } })
  expect(((await me.json()) as { operator: string }).operator).toBe('alice')
  for (const path of ['/console/', '/console/api/session']) expect((await fetch(server.url + path, { headers: { cookie } })).status).toBe(404)
  // The workflows page reads on a thread of its own (docs/console.md#performance), started by this request; SIGTERM still ends serve at once.
  const workflows = await fetch(new URL('/console/api/workflows?period=30d', url), { headers: { cookie } })
  expect(workflows.status).toBe(200)
  expect(((await workflows.json()) as { totals: { started: number } }).totals.started).toBe(0)
  const stopping = performance.now()
  expect(await server.stop()).toBe(0)
  expect(performance.now() - stopping).toBeLessThan(5_000)
})

test('over a real socket, a DNS-rebinding Host gets 421 from the admin listener; its own address is answered', async () => {
  const env = await cliEnv('[server]\nadmin_listen = "127.0.0.1:0"\n')
  const server = await startServer(env)
  const url = new URL((await consoleUrl(server.output))!)
  const rebound = await fetch(new URL('/metrics', url), { headers: { host: `rebound.attacker.example:${url.port}` } })
  expect(rebound.status).toBe(421)
  expect(((await rebound.json()) as { error: string }).error).toBe(
    "Host 'rebound.attacker.example' is not a name of this admin listener: add it to server.admin_allowed_hosts",
  )
  expect((await fetch(new URL('/metrics', url))).status).toBe(200)
  expect((await fetch(new URL('/metrics', url), { headers: { host: `localhost:${url.port}` } })).status).toBe(200)
})

test('over a real socket, failed sign-ins are limited per client address and name, never across names', async () => {
  const env = await cliEnv('[server]\nadmin_listen = "127.0.0.1:0"\n')
  const server = await startServer(env)
  const url = (await consoleUrl(server.output))!
  const signIn = async (name: string) =>
    (
      await fetch(new URL('/console/api/session', url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name, password: 'not a password at all' }),
      })
    ).status
  // Every client here is 127.0.0.1, as every operator is behind an SSH tunnel: 20 failures under 20 names lock out no other name.
  for (let i = 0; i < 20; i++) expect(await signIn(`nobody-${i}`)).toBe(401)
  expect(await signIn('nobody-20')).toBe(401)
  // One name from this address: its fifth failure fills its window.
  for (let i = 0; i < 4; i++) expect(await signIn('nobody-20')).toBe(401)
  expect(await signIn('nobody-20')).toBe(429)
  expect(await signIn('nobody-21')).toBe(401)
})

test('with [console] enabled = false, serve prints no console URL and the admin listener has none', async () => {
  const env = await cliEnv('[server]\nadmin_listen = "127.0.0.1:0"\n\n[console]\nenabled = false\n')
  const server = await startServer(env)
  expect(await consoleUrl(server.output)).toBeUndefined()
  const admin = /otpd admin listening on (http:\/\/[0-9.]+:[0-9]+)/.exec(server.output())![1]!
  expect((await fetch(`${admin}/console/`, { redirect: 'manual' })).status).toBe(404)
  expect((await fetch(`${admin}/healthz`)).status).toBe(200)
})
