/** What Server.reload (SIGHUP) applies at once, and what it leaves for a restart (docs/operating.md). */
import { expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { resolveConfig } from '../../src/app/load-config.ts'
import { harnessPerTest, TEST, type Harness } from '../kit/harness.ts'

const start = harnessPerTest()

/** The harness's database (a SQLite file, or its PostgreSQL database and secret) with `extra` over it. */
const configWith = (h: Harness, extra: Record<string, any>) => {
  const base = {
    database: { path: h.dbPath, ...(h.databaseUrl ? { url: h.databaseUrl } : {}) },
    server: h.databaseUrl ? { secret: h.server.config.server.secret } : {},
  }
  return resolveConfig({ ...extra, database: { ...base.database, ...extra.database }, server: { ...base.server, ...extra.server } })
}

test('a new per-key limit, lockout and code length are in force for the next request', async () => {
  const h = await start({ credits: 10 })
  for (let i = 0; i < 3; i++) expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).status).toBe(200)
  const restart = h.server.reload(
    configWith(h, { limits: { key_requests_per_minute: 4, max_failed_attempts: 1, lockout_seconds: 60 }, codes: { default_length: 8 } }),
  )
  expect(restart).toEqual([])
  // Hits made before the reload count toward the new limit: the log of hits is in the database.
  const fourth = await h.send({ channel: 'sms', recipient: '+14155550101' })
  expect(fourth.status).toBe(200)
  expect(h.delivery.lastCode()).toHaveLength(8)
  const fifth = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  expect(fifth.status).toBe(429)
  expect(fifth.json.error).toContain('4 requests per minute')
})

test('the lockout message follows the new lockout_seconds', async () => {
  const h = await start()
  h.server.reload(configWith(h, { limits: { max_failed_attempts: 1, lockout_seconds: 60 } }))
  const sent = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  expect((await h.verify({ verification_id: sent.json.verification_id, code: '000000' })).json.message).toBe('Invalid code')
  const locked = await h.verify({ verification_id: sent.json.verification_id, code: '123456' })
  expect(locked.status).toBe(429)
  expect(locked.json.message).toContain('1 minute')
})

test('settings that need a restart are named and keep their running values; a second reload compares with what runs', async () => {
  const h = await start()
  const next = configWith(h, { server: { listen: '127.0.0.1:9999', metrics_token: 'x'.repeat(40) }, database: { path: h.dbPath, busy_timeout_ms: 100 } })
  expect(h.server.reload(next)).toEqual(['server.listen', 'server.metrics_token', 'database.busy_timeout_ms'])
  expect(h.server.reload(next)).toEqual(['server.listen', 'server.metrics_token', 'database.busy_timeout_ms'])
  expect(h.server.reload(configWith(h, {}))).toEqual([])
})

test('a renewed certificate at the same paths is named as waiting for a restart (Bun cannot swap it in a running listener)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'otpd-reload-tls-'))
  try {
    const cert = join(dir, 'cert.pem')
    const key = join(dir, 'key.pem')
    const make = (cn: string) => {
      const p = Bun.spawnSync(
        [
          'openssl',
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-days',
          '1',
          '-keyout',
          key,
          '-out',
          cert,
          '-subj',
          `/CN=${cn}`,
        ],
        { stderr: 'pipe' },
      )
      if (p.exitCode !== 0) throw new Error(p.stderr.toString())
    }
    make('first')
    const h = await start({ config: { server: { tls: { cert, key } } } })
    const same = configWith(h, { server: { tls: { cert, key } } })
    expect(h.server.reload(same)).toEqual([])
    make('renewed')
    expect(h.server.reload(same)).toEqual(['server.tls'])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
