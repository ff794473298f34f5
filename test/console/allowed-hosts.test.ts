/**
 * The admin listener answers only to its own names (docs/configuration.md#server):
 * a DNS-rebinding page, whose name now resolves to 127.0.0.1, sends that name
 * in `Host`. It gets 421 on /metrics, the health checks and the console,
 * sign-in included, so it can neither read nor drive sign-in failures.
 * Loopback names, the listen address's host, any address and the configured
 * names are answered.
 */
import { expect, test } from 'bun:test'
import { closeAfterTest } from '../kit/cleanup.ts'
import { consoleHarness, OPERATOR } from '../kit/console.ts'

const REBOUND = 'attacker.example'
const refusal = (name: string) => `Host '${name}' is not a name of this admin listener: add it to server.admin_allowed_hosts`

test('DNS rebinding: a Host that is not the listener own name gets 421 everywhere; nothing is read or counted', async () => {
  const h = closeAfterTest(await consoleHarness())
  const attempts = await h.sql('SELECT count(*) AS n FROM console_sign_in_attempts')
  for (const [path, body] of [
    ['/metrics'],
    ['/healthz'],
    ['/console/'],
    ['/console/api/keys'],
    ['/console/api/session', { name: OPERATOR, password: 'guess one' }],
  ] as const) {
    for (const host of [`${REBOUND}:9090`, REBOUND, `${REBOUND}.`, 'LOCALHOST.attacker.example']) {
      const r = await h.admin(path, {
        headers: { host },
        body: body as Record<string, unknown> | undefined,
        session: path === '/console/api/keys' ? h.session : null,
      })
      const name = host
        .toLowerCase()
        .replace(/:9090$/, '')
        .replace(/\.$/, '')
      expect({ path, host, status: r.status, error: r.json.error }).toEqual({ path, host, status: 421, error: refusal(name) })
      expect(r.text).not.toContain('otpd_')
    }
  }
  expect(await h.sql('SELECT count(*) AS n FROM console_sign_in_attempts')).toEqual(attempts)
})

test('loopback names, the listen host, any address and the configured names are answered', async () => {
  const h = closeAfterTest(await consoleHarness({ config: { server: { admin_listen: 'admin.internal:0', admin_allowed_hosts: ['ops.example.com'] } } }))
  for (const host of [
    'localhost',
    'localhost:9090',
    'LocalHost.',
    '127.0.0.1:9090',
    '[::1]:9090',
    '10.1.2.3',
    'admin.internal:9090',
    'ops.example.com',
    'OPS.example.com:443',
  ]) {
    expect({ host, status: (await h.admin('/healthz', { headers: { host } })).status }).toEqual({ host, status: 200 })
  }
  expect((await h.admin('/healthz', { headers: { host: 'other.example.com' } })).status).toBe(421)
})
