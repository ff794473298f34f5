/**
 * Secrets (docs/api.md#hardening): after a run, the
 * database, its WAL and the logs hold no API key, code or server secret in
 * clear; keys and codes are compared as equal-length HMACs with
 * crypto.timingSafeEqual. The fast version of scripts/proofs/secrets.ts.
 */
import { expect, spyOn, test } from 'bun:test'
import * as crypto from 'node:crypto'
import { afterTest } from '../kit/cleanup.ts'
import { scan, type Secret } from '../kit/processes.ts'
import { databaseBytes, harnessPerTest, TEST } from '../kit/harness.ts'

const start = harnessPerTest()

const SERVER_SECRET = 'srv-secret-' + crypto.randomBytes(16).toString('hex')

test('after sends, verifies and key changes, no key, code or server secret is in the database, its WAL or the logs', async () => {
  const h = await start({ credits: 1000, config: { server: { secret: SERVER_SECRET } } })
  await h.server.admin.setCodeLength('default', 10)
  const secrets: Secret[] = [{ kind: 'server secret', value: SERVER_SECRET }]
  const keys = [h.key]
  for (let i = 0; i < 4; i++) keys.push((await h.server.admin.createKey({ name: `k${i}` })).key)
  for (const key of keys) secrets.push({ kind: 'api key', value: key })
  await h.server.admin.setKeyStatus((await h.server.admin.listKeys())[1]!.prefix, 'disabled')

  for (let i = 0; i < 40; i++) {
    const key = keys[i % keys.length]!
    const custom = i % 3 === 0 ? String(1_000_000_000 + i * 7_919_111) : undefined
    const sent = await h.send(
      {
        channel: i % 2 ? 'sms' : 'email',
        recipient: i % 2 ? `+1415555${String(i).padStart(4, '0')}` : `user${i}@example.com`,
        ...(custom ? { code: custom } : {}),
      },
      key,
    )
    if (sent.status !== 200) continue
    const code = custom ?? h.delivery.lastCode()
    expect(code).toHaveLength(10)
    const wrong = String(9_000_000_000 + i)
    secrets.push({ kind: 'code', value: code }, { kind: 'code', value: wrong })
    expect((await h.verify({ verification_id: sent.json.verification_id, code: wrong }, key)).json.message).toBe('Invalid code')
    if (i % 2) expect((await h.verify({ verification_id: sent.json.verification_id, code }, key)).json.verified).toBe(true)
  }
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS }, keys[1]) // a disabled key: 403, logged or not
  expect(secrets.filter((s) => s.kind === 'code').length).toBeGreaterThan(40)

  // While the server is open, the WAL holds the recent pages (SQLite); PostgreSQL's data is read with pg_dump.
  const stored = databaseBytes(h)
  if (h.databaseUrl === undefined) expect(stored.map((f) => f.name)).toContain(`${h.dbPath}-wal`)
  const haystacks = [...stored, { name: 'logs', bytes: Buffer.from(h.logs.join('\n')) }]
  expect(scan(haystacks, secrets)).toEqual([])

  // The scan can fail: a key, a code and the secret planted in a copy are found.
  const planted = {
    name: 'planted',
    bytes: Buffer.concat([stored[0]!.bytes, Buffer.from(`${keys[2]!.slice(19, 40)} ${secrets.find((s) => s.kind === 'code')!.value} ${SERVER_SECRET}`)]),
  }
  expect(
    scan([planted], secrets)
      .map((x) => x.kind)
      .sort(),
  ).toEqual(['api key', 'code', 'server secret'])
})

test('a verify compares the code as equal-length HMACs with timingSafeEqual, right or wrong', async () => {
  const h = await start({ credits: 10 })
  const sent = await h.send({ channel: 'sms', recipient: '+14155550123', code: '48151623' })
  const spy = spyOn(crypto, 'timingSafeEqual')
  afterTest(() => spy.mockRestore())
  for (const code of ['1234', '48151624', '4815162342', '48151623']) {
    spy.mockClear()
    await h.verify({ verification_id: sent.json.verification_id, code })
    // Exactly one comparison per attempt, of two 32-byte HMAC-SHA-256 digests, whatever the code's length.
    expect(spy.mock.calls.map((c) => [c[0].byteLength, c[1].byteLength])).toContainEqual([32, 32])
  }
  expect((await h.verify({ verification_id: sent.json.verification_id, code: '48151623' })).json.message).toBe('Code already used')
})

test('an API key is checked by comparing HMACs with timingSafeEqual, never the key itself', async () => {
  const h = await start()
  const spy = spyOn(crypto, 'timingSafeEqual')
  afterTest(() => spy.mockRestore())
  // The right key, and a wrong one that shares its display prefix (so a stored row is compared).
  const wrong = h.key.slice(0, 13) + 'x'.repeat(h.key.length - 13)
  for (const key of [h.key, wrong]) {
    spy.mockClear()
    const r = await h.verify({}, key)
    expect(r.status).toBe(key === h.key ? 400 : 401)
    expect(spy.mock.calls.map((c) => [c[0].byteLength, c[1].byteLength])).toContainEqual([32, 32])
  }
})
