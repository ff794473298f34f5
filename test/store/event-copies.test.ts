/**
 * The event outbox's per-process copies (store/sqlite/event-store.ts): the
 * account's endpoints and a verification's last sequence, kept between
 * transactions, give what the reads would, with a second connection writing
 * to the same file in between (as a second `otpd serve` or the CLI does) and
 * after a rolled-back write.
 */
import { Database } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import type { Verification } from '../../src/otp/types.ts'
import { openDatabase, openReader } from '../../src/store/sqlite/db.ts'
import { SqliteStorage } from '../../src/store/sqlite/storage.ts'
import { sweep } from '../../src/store/sqlite/sweep.ts'
import { closeAfterTest, tempDir } from '../kit/cleanup.ts'

function open(path: string): SqliteStorage {
  const db = openDatabase({ path })
  closeAfterTest(db.$client)
  const reader = openReader(db, path)
  closeAfterTest(reader.$client)
  return new SqliteStorage(db, reader, {
    busyTimeoutMs: 2000,
    onFatal: (err) => {
      throw err
    },
  })
}

function verification(seq: number, accountId: number, keyId: number): Verification {
  return {
    seq,
    id: `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`,
    keyId,
    accountId,
    channel: 'sms',
    recipientHash: new Uint8Array(16).fill(seq),
    recipientMask: '+1555*****01',
    codeHash: new Uint8Array(32),
    testMode: null,
    status: 'active',
    charged: true,
    createdAt: 1_000,
    expiresAt: 301_000,
    usedAt: null,
    failedAttempts: 0,
    lockedUntil: null,
    delivery: 'sending',
    deliveryProvider: null,
    deliveryUpdatedAt: 1_000,
  }
}

async function setup() {
  const path = join(tempDir('otpd-event-copies-'), 'otpd.db')
  const a = open(path)
  const b = open(path)
  const { accountId, keyId } = await a.write(async (r) => {
    const acc = await r.admin.insertAccount('acme', 1_000)
    const keyId = await r.admin.insertKey({
      accountId: acc.id,
      name: 'k',
      prefix: 'otp_test',
      keyHash: 'h',
      at: 1_000,
    })
    return { accountId: acc.id, keyId }
  })
  return { path, a, b, accountId, keyId }
}

const rows = (path: string, sql: string) => {
  const c = new Database(path, { readonly: true })
  try {
    return c.query(sql).all()
  } finally {
    c.close()
  }
}

test('an endpoint added by another connection gets the next event of the account, and one deleted there gets none', async () => {
  const { path, a, b, accountId, keyId } = await setup()
  const v = verification(1, accountId, keyId)
  // A looks at the account's endpoints (none) and keeps that.
  await a.write(async (r) => {
    await r.verifications.insert(v)
    await r.events.add({
      type: 'verification.sent',
      accountId,
      at: 2_000,
      verification: v,
      status: 'pending',
      extra: {},
    })
  })
  const endpoint = await b.write((r) =>
    r.webhooks.insertEndpoint({
      accountId,
      url: 'http://127.0.0.1:9/h',
      events: null,
      secret: new Uint8Array(32),
      at: 2_000,
    }),
  )
  await a.write((r) =>
    r.events.add({
      type: 'verification.approved',
      accountId,
      at: 3_000,
      verification: v,
      status: 'approved',
      extra: {},
    }),
  )
  expect(rows(path, 'SELECT e.type, d.endpoint_id AS endpoint FROM event_deliveries d JOIN events e ON e.seq = d.event_seq')).toEqual([
    { type: 'verification.approved', endpoint },
  ])
  await b.write((r) => r.webhooks.deleteEndpoint(endpoint))
  await a.write((r) =>
    r.events.add({
      type: 'verification.expired',
      accountId,
      at: 4_000,
      verification: v,
      status: 'expired',
      extra: {},
    }),
  )
  expect(rows(path, 'SELECT count(*) AS n FROM event_deliveries')).toEqual([{ n: 0 }])
})

test("a verification's sequence counts the events another connection wrote, and not those of a rolled-back write", async () => {
  const { path, a, b, accountId, keyId } = await setup()
  const v = verification(1, accountId, keyId)
  await a.write(async (r) => {
    await r.verifications.insert(v)
    await r.events.add({
      type: 'verification.sent',
      accountId,
      at: 2_000,
      verification: v,
      status: 'pending',
      extra: {},
    })
  })
  // B writes the verification's second event; A's next one is the third.
  await b.write((r) =>
    r.events.add({
      type: 'verification.attempt_failed',
      accountId,
      at: 2_500,
      verification: v,
      status: 'pending',
      extra: {},
    }),
  )
  await a.write((r) =>
    r.events.add({
      type: 'verification.attempt_failed',
      accountId,
      at: 3_000,
      verification: v,
      status: 'pending',
      extra: {},
    }),
  )
  // A write of A that adds an event and then fails is undone, its sequence with it.
  await expect(
    a.write(async (r) => {
      await r.events.add({
        type: 'verification.approved',
        accountId,
        at: 3_500,
        verification: v,
        status: 'approved',
        extra: {},
      })
      throw new Error('undone')
    }),
  ).rejects.toThrow('undone')
  await a.write((r) =>
    r.events.add({
      type: 'verification.approved',
      accountId,
      at: 4_000,
      verification: v,
      status: 'approved',
      extra: {},
    }),
  )
  expect(rows(path, 'SELECT type, sequence FROM events ORDER BY seq')).toEqual([
    { type: 'verification.sent', sequence: 1 },
    { type: 'verification.attempt_failed', sequence: 2 },
    { type: 'verification.attempt_failed', sequence: 3 },
    { type: 'verification.approved', sequence: 4 },
  ])
})

test('an event id names its row, and an event from before such ids is still found by its id', async () => {
  const { path, a, b, accountId, keyId } = await setup()
  const v = verification(1, accountId, keyId)
  await a.write(async (r) => {
    await r.verifications.insert(v)
    await r.events.add({ type: 'verification.sent', accountId, at: 2_000, verification: v, status: 'pending', extra: {} })
  })
  const [made] = rows(path, 'SELECT id, seq FROM events') as { id: string; seq: number }[]
  expect(made!.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  expect((await a.read((r) => r.webhooks.findEvent(made!.id)))?.seq).toBe(made!.seq)
  // As migration 0009 leaves one: a random v4 id, kept in event_legacy_ids.
  const legacy = crypto.randomUUID()
  const c = new Database(path)
  c.run(
    "INSERT INTO events (seq, id, account_id, type, verification_id, verification_seq, sequence, occurred_at, body) VALUES (7, ?1, ?2, 'send.blocked', NULL, NULL, 0, 1, '{}')",
    [legacy, accountId],
  )
  c.run('INSERT INTO event_legacy_ids (id, seq) VALUES (?1, 7)', [legacy])
  c.close()
  expect((await b.read((r) => r.webhooks.findEvent(legacy)))?.seq).toBe(7)
  expect(await b.read((r) => r.webhooks.findEvent(crypto.randomUUID()))).toBeUndefined()
  // The next event follows the row another connection wrote.
  await a.write((r) => r.events.add({ type: 'verification.approved', accountId, at: 3_000, verification: v, status: 'approved', extra: {} }))
  expect(rows(path, 'SELECT seq FROM events ORDER BY seq')).toEqual([{ seq: made!.seq }, { seq: 7 }, { seq: 8 }])
})

test('the retention sweep removes an old event together with its legacy id, and legacy ids whose event an earlier sweep removed', async () => {
  const { path, accountId } = await setup()
  const DAY = 86_400_000
  const c = new Database(path)
  const event = (seq: number, id: string, at: number) =>
    c.run(
      "INSERT INTO events (seq, id, account_id, type, verification_id, verification_seq, sequence, occurred_at, body) VALUES (?1, ?2, ?3, 'send.blocked', NULL, NULL, 0, ?4, '{}')",
      [seq, id, accountId, at],
    )
  const [old, recent, orphan] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()]
  event(7, old, 1_000)
  // Below the old one (so the old one's legacy id goes with its event, not by being below every event left).
  event(3, recent, 10 * DAY)
  for (const [id, seq] of [
    [old, 7],
    [recent, 3],
    [orphan, 2], // its event went in a sweep from before legacy ids were swept with their events
  ] as const)
    c.run('INSERT INTO event_legacy_ids (id, seq) VALUES (?1, ?2)', [id, seq])
  c.close()
  const db = openDatabase({ path })
  closeAfterTest(db.$client)
  // Retention 7 days, 10 days on: the first event is past it, the second is not.
  const swept = sweep(db, 10 * DAY + 1_000, 7)
  expect(swept.events).toBe(1)
  expect(rows(path, 'SELECT seq FROM events ORDER BY seq')).toEqual([{ seq: 3 }])
  expect(rows(path, 'SELECT id, seq FROM event_legacy_ids ORDER BY seq')).toEqual([{ id: recent, seq: 3 }])
})
