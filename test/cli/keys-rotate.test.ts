/**
 * `otpd keys rotate` (docs/operating.md#rotating-a-key) against a running
 * server, on both engines: the new key works at once for the same account and
 * name, the old one until its grace period ends, then gets 401 as a revoked
 * key; the rotation is audited; only an active key, once, can be rotated.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { cliEnv, post, startServer } from '../kit/cli.ts'
import { waitFor } from '../kit/wait-for.ts'

setDefaultTimeout(30_000)

const send = (url: string, key: string) => post(url, '/api/v1/send', key, { channel: 'sms', recipient: '+15550100001' })

test('the old key works until the grace period ends, then is refused as revoked; the new one works at once', async () => {
  const env = await cliEnv()
  env.json('accounts', 'create', 'acme')
  const old = env.json('keys', 'create', '--name', 'shop', '--account', 'acme')
  const server = await startServer(env)
  expect((await send(server.url, old.key)).status).toBe(200)

  const r = env.json('keys', 'rotate', old.prefix, '--grace', '4s', '--operator', 'ops')
  expect(r).toMatchObject({ name: 'shop', account: 'acme', replaced: { id: old.id, prefix: old.prefix, status: 'active' } })
  expect(r.key).toMatch(/^otpd_[0-9A-Za-z]{40}$/)
  expect(r.id).not.toBe(old.id)
  const expires = Date.parse(r.replaced.expires_at)
  expect(expires - Date.now()).toBeGreaterThan(2_000)
  expect((await send(server.url, r.key)).status).toBe(200)
  expect((await send(server.url, old.key)).status).toBe(200)

  const rows = env.run('keys', 'list')
  expect(rows.stdout.split('\n')[0]).toMatch(/ EXPIRES$/)
  await waitFor(async () => (await send(server.url, old.key)).status === 401, { ms: 10_000, what: 'the old key refused' })
  expect(Date.now()).toBeGreaterThanOrEqual(expires)
  const gone = await send(server.url, old.key)
  expect([gone.status, gone.json.error]).toEqual([401, 'Invalid API key'])
  expect((await send(server.url, r.key)).status).toBe(200)
  const listed = env.json('keys', 'list', '--account', 'acme')
  expect(listed.map((k: { id: number; status: string }) => [k.id, k.status])).toEqual([
    [old.id, 'expired'],
    [r.id, 'active'],
  ])
  const audit = env.json('audit', 'list', '--action', 'key.rotated')
  expect(audit).toHaveLength(1)
  expect(audit[0]).toMatchObject({ operator: 'ops', subject: `key ${old.id}`, details: { prefix: old.prefix, new_key: r.id, new_prefix: r.prefix } })
  expect(JSON.stringify(audit)).not.toContain(r.key)
})

test('--grace 0 revokes the old key at once; a revoked, disabled or already rotated key is refused; a bad period is refused', async () => {
  const env = await cliEnv()
  const a = env.json('keys', 'create', '--name', 'a')
  const now = env.json('keys', 'rotate', String(a.id), '--grace', '0')
  expect(now.replaced.status).toBe('revoked')
  expect(env.run('keys', 'rotate', String(a.id)).stderr).toBe(`otpd: error: key ${a.id} (${a.prefix}) is revoked: only an active key can be rotated\n`)
  const b = env.json('keys', 'create', '--name', 'b')
  env.json('keys', 'disable', String(b.id))
  expect(env.run('keys', 'rotate', String(b.id)).stderr).toBe(`otpd: error: key ${b.id} (${b.prefix}) is disabled: only an active key can be rotated\n`)
  const c = env.json('keys', 'create', '--name', 'c')
  const once = env.json('keys', 'rotate', String(c.id))
  // The default grace: 24 hours.
  expect(Date.parse(once.replaced.expires_at) - Date.parse(once.replaced.created_at)).toBeGreaterThanOrEqual(86_400_000)
  const twice = env.run('keys', 'rotate', String(c.id))
  expect(twice.code).toBe(1)
  expect(twice.stderr).toBe(`otpd: error: key ${c.id} (${c.prefix}) was rotated already; it stops working at ${once.replaced.expires_at}\n`)
  expect(env.run('keys', 'rotate', String(once.id), '--grace', '31d').stderr).toBe('otpd: error: the grace period must be from 0 to 30 days\n')
  expect(env.run('keys', 'rotate', String(once.id), '--grace', '5').stderr).toStartWith("otpd: error: option '--grace <period>' argument '5' is invalid.")
  expect(env.run('keys', 'rotate', '--help').stdout).toContain('--grace <period>')
})
