/**
 * `[server.tls]`: clear config errors, and `otpd serve` answering real HTTPS
 * with a certificate made for the test (plus the plain-HTTP admin listener).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { resolveConfig } from '../../src/config/load.ts'
import { configProblems } from '../kit/config.ts'
import { cliEnv, startServer } from '../kit/cli.ts'
import { TEST } from '../kit/harness.ts'

let dir: string
let cert: string
let key: string
let otherKey: string

function openssl(...args: string[]) {
  const p = Bun.spawnSync(['openssl', ...args], { cwd: dir, stderr: 'pipe' })
  if (p.exitCode !== 0) throw new Error(`openssl ${args.join(' ')}: ${p.stderr.toString()}`)
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'otpd-tls-'))
  cert = join(dir, 'cert.pem')
  key = join(dir, 'key.pem')
  otherKey = join(dir, 'other-key.pem')
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1']
  openssl('req', '-x509', ...ec, '-keyout', key, '-out', cert, '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost')
  openssl('req', '-x509', ...ec, '-keyout', otherKey, '-out', join(dir, 'other-cert.pem'), '-subj', '/CN=other')
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const problems = (tls: Record<string, unknown>): string[] => configProblems(() => resolveConfig({ server: { tls } }))

test('a certificate and its key are accepted', () => {
  expect(problems({ cert, key })).toEqual([])
})

test.each([
  [{ cert: 'C' }, 'server.tls.cert and server.tls.key must be set together (only server.tls.cert is set)'],
  [{ key: 'K' }, 'server.tls.cert and server.tls.key must be set together (only server.tls.key is set)'],
  [{}, 'server.tls.cert and server.tls.key must be set together'],
])('only one of the two files is a clear error: %j', (tls, problem) => {
  expect(problems(tls)).toEqual([problem])
})

test('missing, unreadable, wrong-kind and mismatched files are each named', () => {
  const missing = join(dir, 'nope.pem')
  expect(problems({ cert: missing, key })).toEqual([`server.tls.cert cannot be read: ${missing} (ENOENT)`])
  expect(problems({ cert, key: dir })).toEqual([`server.tls.key cannot be read: ${dir} (EISDIR)`])
  expect(problems({ cert: key, key: cert })).toEqual([
    `server.tls.cert is not a PEM certificate: ${key}`,
    `server.tls.key is not an unencrypted PEM private key: ${cert}`,
  ])
  expect(problems({ cert, key: otherKey })).toEqual(['server.tls.key does not belong to the certificate in server.tls.cert'])
  const garbage = join(dir, 'garbage.pem')
  writeFileSync(garbage, 'not pem at all')
  expect(problems({ cert: garbage, key })).toEqual([`server.tls.cert is not a PEM certificate: ${garbage}`])
  expect(problems({ cert, key, chain: 'x' })).toEqual(['server.tls.chain is not a known setting'])
})

test('otpd serve answers HTTPS with the configured certificate; the admin listener serves /metrics', async () => {
  const env = await cliEnv(`[server]\nadmin_listen = "127.0.0.1:0"\n[server.tls]\ncert = "${cert}"\nkey = "${key}"\n`)
  const apiKey = env.json('keys', 'create').key as string
  const server = await startServer(env)
  try {
    expect(server.url).toStartWith('https://127.0.0.1:')
    const ca = readFileSync(cert, 'utf8')
    const tls = { tls: { ca } } as RequestInit
    const health = await fetch(`${server.url}/healthz`, tls)
    expect(health.status).toBe(200)
    const sent = await fetch(`${server.url}/api/v1/send`, {
      ...tls,
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ channel: 'sms', recipient: TEST.PHONE_SUCCESS }),
    })
    expect(sent.status).toBe(200)
    // Only the configured certificate is presented: a client without it as CA refuses it.
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow()
    // Plain HTTP on the TLS port gets no answer.
    await expect(fetch(server.url.replace('https:', 'http:') + '/healthz')).rejects.toThrow()
    // Without a metrics token, /metrics on the main listener is an unknown path.
    expect((await fetch(`${server.url}/metrics`, tls)).status).toBe(404)

    let admin = ''
    for (let i = 0; i < 100 && !admin; i++) {
      admin = /otpd admin listening on (http:\/\/[0-9.]+:[0-9]+)/.exec(server.output())?.[1] ?? ''
      if (!admin) await Bun.sleep(50)
    }
    expect(admin).not.toBe('')
    const metrics = await fetch(`${admin}/metrics`)
    expect(metrics.status).toBe(200)
    const text = await metrics.text()
    expect(text).toContain('otpd_http_requests_total{route="/api/v1/send",status="200"} 1\n')
    expect(text).toContain('otpd_sends_total{channel="sms",provider="none",outcome="test"} 1\n')
    expect((await fetch(`${admin}/readyz`)).status).toBe(200)
    expect(server.output()).not.toContain(apiKey)
  } finally {
    expect(await server.stop()).toBe(0)
    env.close()
  }
})
