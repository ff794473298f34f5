/**
 * Authentication (docs/api.md#authentication): which header is
 * read, the 401/403 answers, key status changes, per-key isolation of
 * verifications, and what the database keeps of keys and codes.
 */
import { describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pgBinDir } from '../kit/pg-cluster.ts'
import { expectError, harnessPerTest, ON_PG, TEST, type Harness } from '../kit/harness.ts'

const REQUIRED = 'API key is required. Provide it via Authorization: Bearer <token> or x-api-key header'
const INVALID = 'Invalid API key'
const DISABLED = 'API key is disabled'
const ENDPOINTS = ['/api/v1/send', '/api/v1/verify'] as const
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

let h: Harness
const start = harnessPerTest()

const base62 = (n: number) => Array.from({ length: n }, (_, i) => BASE62[(i * 7 + 3) % 62]).join('')
const sendBody = { channel: 'sms', recipient: TEST.PHONE_SUCCESS }

/** A request that passes authentication answers 200 (send to a test recipient). */
const sendWith = (headers: Record<string, string>) => h.call('/api/v1/send', sendBody, { key: null, headers })

describe('which header carries the key', () => {
  test('Authorization: Bearer <key> is accepted', async () => {
    h = await start()
    const r = await sendWith({ authorization: `Bearer ${h.key}` })
    expect(r.status).toBe(200)
    expect(r.json.success).toBe(true)
  })

  test('x-api-key: <key> is accepted', async () => {
    h = await start()
    const r = await sendWith({ 'x-api-key': h.key })
    expect(r.status).toBe(200)
    expect(r.json.success).toBe(true)
  })

  test('Bearer wins: a valid Bearer with a garbage x-api-key is accepted', async () => {
    h = await start()
    const r = await sendWith({ authorization: `Bearer ${h.key}`, 'x-api-key': 'garbage' })
    expect(r.status).toBe(200)
  })

  test('a Bearer token with a space in it is an invalid key, not a missing one', async () => {
    h = await start()
    expectError(await sendWith({ authorization: `Bearer ${h.key} extra` }), 401, INVALID)
  })

  test('Bearer wins: a garbage Bearer with a valid x-api-key is rejected as invalid', async () => {
    h = await start()
    expectError(await sendWith({ authorization: 'Bearer garbage', 'x-api-key': h.key }), 401, INVALID)
  })
})

describe('missing key: 401 with the "required" message', () => {
  const cases: [string, Record<string, string>][] = [
    ['no auth header at all', {}],
    ['an empty x-api-key', { 'x-api-key': '' }],
    ['an empty Authorization header', { authorization: '' }],
    ['Authorization: Basic without x-api-key', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['Authorization: "Bearer " with nothing after it', { authorization: 'Bearer ' }],
  ]
  for (const endpoint of ENDPOINTS) {
    for (const [name, headers] of cases) {
      test(`${endpoint}: ${name}`, async () => {
        h = await start()
        expectError(await h.call(endpoint, {}, { key: null, headers }), 401, REQUIRED)
      })
    }
  }

  test('Authorization: Basic with a valid x-api-key uses the x-api-key', async () => {
    h = await start()
    expect((await sendWith({ authorization: 'Basic dXNlcjpwYXNz', 'x-api-key': h.key })).status).toBe(200)
  })
})

describe('wrong key: 401 Invalid API key', () => {
  const cases: [string, (h: Harness) => string][] = [
    ['a well-formed unknown key', () => `otpd_${base62(40)}`],
    ['a real key prefix with a different secret part', (h) => h.key.slice(0, 13) + base62(40 - 8)],
    ['a real key with one character changed', (h) => h.key.slice(0, -1) + (h.key.endsWith('a') ? 'b' : 'a')],
    ['a malformed key', () => 'not-a-key'],
    ['a key with the wrong prefix', (h) => `otpx_${h.key.slice(5)}`],
    ['a key that is too short', (h) => h.key.slice(0, 5 + 31)],
  ]
  for (const endpoint of ENDPOINTS) {
    for (const [name, make] of cases) {
      test(`${endpoint}: ${name}`, async () => {
        h = await start()
        expectError(await h.call(endpoint, {}, { key: make(h) }), 401, INVALID)
      })
    }
  }
})

describe('key status', () => {
  test('a revoked key answers 401 Invalid API key on both endpoints', async () => {
    h = await start()
    const k = await h.server.admin.createKey({ name: 'soon revoked' })
    expect((await h.send(sendBody, k.key)).status).toBe(200)
    await h.server.admin.setKeyStatus(k.prefix, 'revoked')
    for (const endpoint of ENDPOINTS) expectError(await h.call(endpoint, {}, { key: k.key }), 401, INVALID)
    // Through x-api-key too.
    expectError(await h.call('/api/v1/send', sendBody, { headers: { 'x-api-key': k.key } }), 401, INVALID)
  })

  test('a disabled key answers 403 on both endpoints, and works again once re-enabled', async () => {
    h = await start()
    const k = await h.server.admin.createKey({ name: 'toggled' })
    const sent = await h.send(sendBody, k.key)
    expect(sent.status).toBe(200)
    await h.server.admin.setKeyStatus(String(k.id), 'disabled')
    for (const endpoint of ENDPOINTS) expectError(await h.call(endpoint, {}, { key: k.key }), 403, DISABLED)
    expectError(await h.call('/api/v1/send', sendBody, { headers: { 'x-api-key': k.key } }), 403, DISABLED)
    // Other keys of the account are not affected.
    expect((await h.send(sendBody)).status).toBe(200)

    await h.server.admin.setKeyStatus(k.prefix, 'active')
    expect((await h.send(sendBody, k.key)).status).toBe(200)
    const ok = await h.verify({ verification_id: sent.json.verification_id, code: '123456' }, k.key)
    expect(ok.status).toBe(200)
    expect(ok.json.message).toBe('Code verified successfully')
  })
})

describe('per-key isolation of verifications', () => {
  const notFound = async (otherKey: string) => {
    const sent = await h.send(sendBody)
    const id = sent.json.verification_id
    expectError(await h.verify({ verification_id: id, code: '123456' }, otherKey), 404, 'Verification not found')
    // The failed look-up did not touch it: the owner still verifies once.
    const ok = await h.verify({ verification_id: id, code: '123456' })
    expect(ok.json).toMatchObject({ verified: true, message: 'Code verified successfully' })
  }

  test('another key of the same account gets 404', async () => {
    h = await start()
    await notFound((await h.server.admin.createKey({ name: 'b' })).key)
  })

  test('a key of another account gets 404', async () => {
    h = await start()
    await h.server.admin.createAccount('other')
    await notFound((await h.server.admin.createKey({ name: 'c', account: 'other' })).key)
  })
})

describe('key format and storage', () => {
  test('created keys are otpd_ + at least 32 base62 characters, prefix = the next 8', async () => {
    h = await start()
    const a = await h.server.admin.createKey({ name: 'a' })
    const b = await h.server.admin.createKey({ name: 'b' })
    for (const k of [a, b]) {
      expect(k.key).toMatch(/^otpd_[0-9A-Za-z]{32,}$/)
      expect(k.prefix).toBe(k.key.slice(5, 13))
      expect(k.prefix).toHaveLength(8)
    }
    expect(a.key).not.toBe(b.key)
    expect(h.key).toMatch(/^otpd_[0-9A-Za-z]{32,}$/)
  })

  test('the database (file and WAL) holds neither a key nor a delivered code in clear', async () => {
    h = await start({ credits: 5 })
    const k = await h.server.admin.createKey({ name: 'stored' })
    // Ten-digit codes, so a match by chance (in a timestamp, say) is out of the question.
    await h.server.admin.setCodeLength('default', 10)
    const code = '9081726354'
    const sent = await h.send({ channel: 'email', recipient: 'ada@example.com', code }, k.key)
    expect(sent.status).toBe(200)
    const generated = await h.send({ channel: 'sms', recipient: '+14155550123' }, k.key)
    expect(generated.status).toBe(200)
    const delivered = h.delivery.lastCode()
    expect(delivered).toMatch(/^[0-9]{10}$/)
    expect(h.delivery.sent[0]!.text).toContain(code)

    const secretPart = k.key.slice(13)
    const needles = [k.key, secretPart, h.key, h.key.slice(13), code, delivered]
    let bytes: Buffer
    if (h.databaseUrl !== undefined) {
      // PostgreSQL: everything the database holds, as pg_dump writes it (text columns in clear, bytea in hex).
      const dump = Bun.spawnSync([join(pgBinDir(), 'pg_dump'), '--data-only', h.databaseUrl])
      expect(dump.exitCode).toBe(0)
      bytes = Buffer.from(dump.stdout)
    } else {
      const files = [h.dbPath, `${h.dbPath}-wal`].filter(existsSync)
      expect(files).toContain(`${h.dbPath}-wal`)
      bytes = Buffer.concat(files.map((f) => readFileSync(f)))
    }
    // The search does see what is stored in clear (the display prefix)...
    expect(bytes.includes(k.prefix)).toBe(true)
    // ...and none of the secrets.
    for (const needle of needles) expect(bytes.includes(needle)).toBe(false)

    // Row by row too: every text and number column of every table.
    const tables = (await h.sql(
      ON_PG ? "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'" : "SELECT name FROM sqlite_master WHERE type = 'table'",
    )) as {
      name: string
    }[]
    expect(tables.map((t) => t.name)).toContain('api_keys')
    let rows = 0
    for (const { name } of tables) {
      for (const row of await h.sql(`SELECT * FROM "${name}"`)) {
        rows++
        const text = JSON.stringify(row)
        for (const needle of needles) expect(text.includes(needle)).toBe(false)
      }
    }
    expect(rows).toBeGreaterThan(4)
    // The display prefix is the only part of the key kept in clear.
    const prefixes = (await h.sql('SELECT prefix FROM api_keys')).map((r) => r.prefix)
    expect(prefixes).toContain(k.prefix)
  })
})
