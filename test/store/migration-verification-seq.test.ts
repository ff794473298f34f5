/**
 * Migration 0002_verification_seq on a database with verifications in flight
 * (rows written as version 0001 wrote them: random text ids, hex HMACs):
 * after the upgrade their codes still verify by their old ids, they still
 * count toward the per-recipient limits and the failure cap, new ids carry
 * row numbers past theirs, and the sweep drops the old ids with them.
 */
import { Database } from 'bun:sqlite'
import { expect } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ManualClock } from '../../src/lib/clock.ts'
import { Hasher } from '../../src/lib/secrets.ts'
import { VerificationIds } from '../../src/lib/verification-id.ts'
import { generateKey } from '../../src/otp/api-keys.ts'
import { migrationFiles, migrationJournal } from '../../src/store/sqlite/migrations/index.ts'
import { secretPath } from '../../src/store/secret.ts'
import { tempDir } from '../kit/cleanup.ts'
import { DAY, harnessPerTest, sqliteClient, UUID_V4 } from '../kit/harness.ts'
import { testSqliteOnly } from '../kit/harness.ts'

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0)
const SECRET_HEX = 'c'.repeat(64)
const RECIPIENT = '+14155550100'
const CAPPED = '+14155550199'

const start = harnessPerTest()

/** A database at version 0001 with one key, credits, three verifications and a recipient at its failure cap. */
function legacyDatabase(path: string, hasher: Hasher) {
  const db = new Database(path)
  db.run('PRAGMA journal_mode = WAL')
  for (const tag of ['0000_init', '0001_key_hit_seq']) {
    for (const stmt of migrationFiles[tag]!.split('--> statement-breakpoint')) if (stmt.trim()) db.run(stmt)
  }
  db.run('CREATE TABLE "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)')
  for (const e of migrationJournal.entries.slice(0, 2)) db.run('INSERT INTO "__drizzle_migrations" (hash, created_at) VALUES (?, ?)', ['x', e.when])
  const key = generateKey(hasher)
  db.run('INSERT INTO api_keys (account_id, name, prefix, key_hash, created_at) VALUES (1, ?, ?, ?, ?)', ['old', key.prefix, key.keyHash, NOW - DAY])
  db.run('UPDATE accounts SET balance = 100')
  db.run(`INSERT INTO credit_ledger (account_id, kind, amount, created_at) VALUES (1, 'grant', 100, ?)`, [NOW - DAY])
  const insert = (recipient: string, code: string, createdAgoMs: number) => {
    const id = crypto.randomUUID()
    db.run(
      `INSERT INTO verifications (id, key_id, account_id, channel, recipient_hash, recipient_mask, code_hash, test_mode, status, charged,
         created_at, expires_at, used_at, failed_attempts, locked_until)
       VALUES (?, 1, 1, 'sms', ?, '+1415****100', ?, NULL, 'active', 1, ?, ?, NULL, 0, NULL)`,
      [id, hasher.hash('recipient', `1:${recipient}`), hasher.hash('code', `${id}:${code}`), NOW - createdAgoMs, NOW - createdAgoMs + 300_000],
    )
    return id
  }
  // Two sends to RECIPIENT within the last minute: the per-minute limit (2) is full.
  const first = insert(RECIPIENT, '654321', 20_000)
  const second = insert(RECIPIENT, '111111', 10_000)
  // CAPPED has 100 failures within 24 h: its verifications answer the lockout.
  const capped = insert(CAPPED, '222222', 30_000)
  const failureHash = hasher.hash('recipient', `1:${CAPPED}`)
  for (let i = 0; i < 100; i++) db.run('INSERT INTO recipient_failures (recipient_hash, at) VALUES (?, ?)', [failureHash, NOW - 3_600_000 + i])
  db.close()
  return { key: key.key, first, second, capped }
}

testSqliteOnly('verifications made before the upgrade verify by their old ids and keep counting toward every limit', async () => {
  const dir = tempDir('otpd-mig2-')
  const dbPath = join(dir, 'otpd.db')
  writeFileSync(secretPath(dbPath), `${SECRET_HEX}\n`, { mode: 0o600 })
  const hasher = new Hasher(Buffer.from(SECRET_HEX, 'hex'))
  const old = legacyDatabase(dbPath, hasher)
  const clock = new ManualClock(NOW)
  const h = await start({ dir, key: old.key, clock })

  // Stored as bytes now: the code's whole HMAC, the recipient's first 16 bytes.
  const row = sqliteClient(h.server)
    .query<{ seq: number; r: number; c: number }, [string]>('SELECT seq, length(recipient_hash) AS r, length(code_hash) AS c FROM verifications WHERE id = ?')
    .get(old.first)!
  expect(row).toEqual({ seq: 1, r: 16, c: 32 })

  // The old ids still name their codes; another case of one is still not found.
  expect((await h.verify({ verification_id: old.first.toUpperCase(), code: '654321' })).status).toBe(404)
  expect((await h.verify({ verification_id: old.first, code: '000000' })).json.message).toBe('Invalid code')
  const ok = await h.verify({ verification_id: old.first, code: '654321' })
  expect(ok.status).toBe(200)
  expect(ok.json.message).toBe('Code verified successfully')
  expect((await h.verify({ verification_id: old.first, code: '654321' })).json.message).toBe('Code already used')

  // The two sends of the last minute still count: a third is refused.
  const limited = await h.send({ channel: 'sms', recipient: RECIPIENT })
  expect(limited.status).toBe(429)
  expect(limited.json.error).toMatch(/^Rate limit exceeded: Maximum 2 verification codes per minute\./)
  // The 100 failures still count: the right code gets the lockout.
  const locked = await h.verify({ verification_id: old.capped, code: '222222' })
  expect(locked.status).toBe(429)
  expect(locked.json.retry_after).toBeGreaterThan(0)

  // A new send gets the next row number, and its id verifies: the send refused above drew
  // number 4 with its per-recipient reads (src/otp/send.ts), and SQLite gives it again.
  const fresh = await h.send({ channel: 'sms', recipient: '+14155550123', code: '999999' })
  expect(fresh.status).toBe(200)
  expect(fresh.json.verification_id).toMatch(UUID_V4)
  expect(new VerificationIds(hasher).seqOf(fresh.json.verification_id)).toBe(4)
  expect((await h.verify({ verification_id: fresh.json.verification_id, code: '999999' })).json.verified).toBe(true)

  // Past retention the old verifications go, and their ids with them.
  clock.advance(8 * DAY)
  const swept = await h.server.sweep()
  expect(swept.verifications).toBe(4)
  expect(swept.legacyIds).toBe(3)
  expect((await h.verify({ verification_id: old.second, code: '111111' })).status).toBe(404)
})

testSqliteOnly('an old id whose row number was reused by a newer verification does not find that one', async () => {
  const dir = tempDir('otpd-mig2-')
  const dbPath = join(dir, 'otpd.db')
  writeFileSync(secretPath(dbPath), `${SECRET_HEX}\n`, { mode: 0o600 })
  const old = legacyDatabase(dbPath, new Hasher(Buffer.from(SECRET_HEX, 'hex')))
  const h = await start({ dir, key: old.key, clock: new ManualClock(NOW) })
  // Every verification gone but the old ids kept: row numbers start again at 1.
  sqliteClient(h.server).run('DELETE FROM verifications')
  const fresh = await h.send({ channel: 'sms', recipient: '+14155550124', code: '654321' })
  expect(new VerificationIds(h.server.hasher).seqOf(fresh.json.verification_id)).toBe(1)
  // old.first named row 1 too; it must not reach the new verification.
  expect((await h.verify({ verification_id: old.first, code: '654321' })).status).toBe(404)
  expect((await h.verify({ verification_id: fresh.json.verification_id, code: '654321' })).json.verified).toBe(true)
})
