/**
 * scripts/console-perf's fill: N verifications over the last `days` days
 * across 20 countries and 5 accounts, written straight into a SQLite
 * database in bulk (not through the API), with what the real code keeps
 * beside each: its ledger debit (and refund), its events (sent, delivered or
 * undelivered, attempt_failed, approved, canceled, delivery_failed, with the
 * exact bodies otp/events.ts writes), the deliveries of one account's
 * webhook endpoint, the steps of the workflow sends (a fifth of sms and
 * voice), the fraud guard's rows of the last 24 h, and the
 * console's rollups, made by the rollup store's own recounts.
 */
import type { Database } from 'bun:sqlite'
import { maskRecipient } from '../../src/lib/mask.ts'
import type { Hasher } from '../../src/lib/secrets.ts'
import { VerificationIds } from '../../src/lib/verification-id.ts'
import { eventBody } from '../../src/otp/events.ts'
import type { EventType, PrefixRow, RollupRow, Span } from '../../src/otp/ports/index.ts'
import { ROLLUP_COUNTS, SPAN } from '../../src/otp/ports/stats.ts'
import { recipientIdentity } from '../../src/otp/recipient-identity.ts'
import { HASH_PURPOSE_RECIPIENT, RECIPIENT_HASH_BYTES } from '../../src/otp/send.ts'
import type { Verification } from '../../src/otp/types.ts'
import { SQLITE } from '../../src/store/sql/dialect.ts'
import { ROLLUP_CURSOR } from '../../src/store/sql/stats.ts'
import { SqlStatsStore } from '../../src/store/sql/stats-store.ts'
import { EVENT_ID_PURPOSE } from '../../src/store/sqlite/event-store.ts'
import { sqliteRunner } from '../../src/store/sqlite/runner.ts'

const HOUR = SPAN.hour
const DAY = SPAN.day

/** Calling code and share of the traffic of each country (shares sum to 1). */
export const COUNTRIES: [string, string, number][] = [
  ['US', '1', 0.25],
  ['GB', '44', 0.1],
  ['IN', '91', 0.08],
  ['DE', '49', 0.08],
  ['FR', '33', 0.07],
  ['BR', '55', 0.06],
  ['MX', '52', 0.04],
  ['ES', '34', 0.04],
  ['IT', '39', 0.04],
  ['CA', '1', 0.03],
  ['NG', '234', 0.03],
  ['ID', '62', 0.03],
  ['PH', '63', 0.03],
  ['TR', '90', 0.02],
  ['PL', '48', 0.02],
  ['NL', '31', 0.02],
  ['ZA', '27', 0.02],
  ['EG', '20', 0.02],
  ['UZ', '998', 0.01],
  ['VN', '84', 0.01],
]

export interface FillAccount {
  id: number
  name: string
  share: number
}

export interface FillOptions {
  n: number
  days: number
  now: number
  accounts: FillAccount[]
  keyIds: Map<number, number>
  /** The account whose events go to a webhook endpoint, and that endpoint. */
  hookAccount: number
  endpointId: number
  hasher: Hasher
  log(line: string): void
}

/** A small deterministic generator (mulberry32): the same fill every run. */
function rng(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function pick<T>(r: number, items: T[], share: (t: T) => number): T {
  let acc = 0
  for (const t of items) {
    acc += share(t)
    if (r < acc) return t
  }
  return items.at(-1)!
}

/** The number of recipient `i` of a country: a few operator ranges, so prefixes repeat as real traffic's do. */
export function phoneOf(cc: string, i: number): string {
  return `+${cc}${700 + (i % 40)}${String(i % 1_000_000).padStart(6, '0')}`
}

export async function fillDatabase(db: Database, o: FillOptions): Promise<{ events: number; ledger: number; deliveries: number }> {
  const rand = rng(20261126)
  const ids = new VerificationIds(o.hasher)
  const eventIds = new VerificationIds(o.hasher, EVENT_ID_PURPOSE)
  const names = new Map(o.accounts.map((a) => [a.id, a.name]))
  const start = o.now - o.days * DAY
  const step = (o.days * DAY) / o.n
  const fraudFrom = o.now - DAY
  const codeHash = new Uint8Array(32)

  db.run('PRAGMA synchronous = OFF')
  db.run('PRAGMA cache_size = -2000000')
  const insV = db.prepare(
    `INSERT INTO verifications (seq, id, key_id, account_id, channel, recipient_hash, recipient_mask, code_hash, test_mode, status, charged, created_at,
      expires_at, used_at, failed_attempts, locked_until, delivery, delivery_provider, delivery_updated_at, country, fraud_monitored)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, 1, ?, ?, ?, ?, NULL, ?, ?, ?, ?, NULL)`,
  )
  const insE = db.prepare(
    'INSERT INTO events (seq, id, account_id, type, verification_id, verification_seq, sequence, occurred_at, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  )
  const insD = db.prepare(
    `INSERT INTO event_deliveries (event_seq, endpoint_id, status, attempts, first_at, next_at, lease_until, lease_owner, last_error, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?)`,
  )
  const insL = db.prepare('INSERT INTO credit_ledger (account_id, kind, amount, verification_id, note, created_at) VALUES (?, ?, 1, ?, NULL, ?)')
  const insS = db.prepare(
    'INSERT INTO verification_steps (verification_seq, step, channel, recipient_mask, channel_timeout, started_at) VALUES (?, ?, ?, ?, 60, ?)',
  )
  const insF = db.prepare('INSERT INTO fraud_sends (seq, account_id, at, country, prefix, ip_hash, counted, approved_at) VALUES (?, ?, ?, ?, ?, NULL, 1, ?)')
  let eventSeq = ((db.query('SELECT max(seq) AS n FROM events').get() as { n: number | null }).n ?? 0) + 1
  let ledger = 0
  let deliveries = 0
  const spent = new Map<number, number>()

  const BATCH = 20_000
  const t0 = performance.now()
  for (let first = 1; first <= o.n; first += BATCH) {
    db.transaction(() => {
      for (let seq = first; seq < Math.min(first + BATCH, o.n + 1); seq++) {
        const account = pick(rand(), o.accounts, (a) => a.share)
        const r = rand()
        const channel = r < 0.85 ? 'sms' : r < 0.95 ? 'email' : 'voice'
        const [country, cc] = pick(rand(), COUNTRIES, (c) => c[2])
        const who = Math.floor(rand() * 500_000)
        const recipient = channel === 'email' ? `user${who}@example${who % 50}.com` : phoneOf(cc, who)
        const createdAt = Math.floor(start + (seq - 1) * step + rand() * step)
        const d = rand()
        const delivery = d < 0.02 ? 'failed' : d < 0.023 ? 'unknown' : d < 0.83 ? 'delivered' : d < 0.86 ? 'undelivered' : 'accepted'
        const provider = delivery === 'failed' ? null : channel === 'email' ? 'smtp' : channel === 'voice' || rand() < 0.9 ? 'twilio' : 'vonage'
        const canceled = delivery !== 'failed' && rand() < 0.005
        const usedAt = delivery !== 'failed' && !canceled && rand() < 0.78 ? createdAt + 10_000 + Math.floor(rand() * 50_000) : null
        const attempts = delivery !== 'failed' && rand() < 0.1 ? 1 : 0
        const id = ids.make(seq)
        const hash = o.hasher.digest(HASH_PURPOSE_RECIPIENT, `${account.id}:${recipientIdentity(channel, recipient)}`).subarray(0, RECIPIENT_HASH_BYTES)
        crypto.getRandomValues(codeHash)
        const status = delivery === 'failed' ? 'failed' : canceled ? 'canceled' : 'active'
        const v: Verification = {
          seq,
          id,
          keyId: o.keyIds.get(account.id)!,
          accountId: account.id,
          channel,
          recipientHash: hash,
          recipientMask: maskRecipient(recipient),
          codeHash,
          testMode: null,
          status,
          charged: true,
          createdAt,
          expiresAt: createdAt + 300_000,
          usedAt,
          failedAttempts: attempts,
          lockedUntil: null,
          delivery,
          deliveryProvider: provider,
          deliveryUpdatedAt: createdAt + 4000,
          country: channel === 'email' ? null : country,
        }
        insV.run(
          seq,
          id,
          v.keyId,
          account.id,
          channel,
          hash,
          v.recipientMask,
          codeHash,
          status,
          createdAt,
          v.expiresAt,
          usedAt,
          attempts,
          delivery,
          provider,
          v.deliveryUpdatedAt,
          v.country ?? null,
        )
        // A fifth of the sms and voice sends are workflows of two steps (the workflows page); a third of those moved on to the second.
        if (channel !== 'email' && seq % 5 === 0) {
          insS.run(seq, 0, channel, v.recipientMask, createdAt)
          insS.run(seq, 1, channel === 'sms' ? 'voice' : 'sms', v.recipientMask, seq % 15 === 0 ? createdAt + 60_000 : null)
        }
        insL.run(account.id, 'debit', id, createdAt)
        ledger++
        const refunded = delivery === 'failed' || delivery === 'unknown'
        if (refunded) {
          insL.run(account.id, 'refund', id, createdAt + 2000)
          ledger++
        }
        spent.set(account.id, (spent.get(account.id) ?? 0) + (refunded ? 0 : 1))
        // Its events, in order.
        const events: [EventType, number, Record<string, string | number | null>, string][] = []
        if (delivery === 'failed') events.push(['verification.delivery_failed', createdAt + 2000, {}, 'failed'])
        else if (delivery !== 'unknown') events.push(['verification.sent', createdAt + 1000, { provider }, 'pending'])
        if (delivery === 'delivered' || delivery === 'undelivered') events.push([`verification.${delivery}`, createdAt + 4000, { provider }, 'pending'])
        if (attempts) events.push(['verification.attempt_failed', createdAt + 8000, { failed_attempts: 1 }, 'pending'])
        if (usedAt !== null) events.push(['verification.approved', usedAt, {}, 'approved'])
        if (canceled) events.push(['verification.canceled', createdAt + 20_000, {}, 'canceled'])
        let sequence = 0
        for (const [type, at, extra, st] of events) {
          const eid = eventIds.make(eventSeq)
          const body = eventBody({ type, accountId: account.id, at, verification: v, status: st as never, extra }, eid, names.get(account.id)!, ++sequence)
          insE.run(eventSeq, eid, account.id, type, id, seq, sequence, at, body)
          if (account.id === o.hookAccount) {
            const pending = at > o.now - 60_000
            const failed = !pending && rand() < 0.005
            insD.run(
              eventSeq,
              o.endpointId,
              pending ? 'pending' : failed ? 'failed' : 'delivered',
              pending ? 0 : failed ? 12 : 1,
              at,
              at,
              failed ? 'HTTP 503' : null,
              at + 200,
            )
            deliveries++
          }
          eventSeq++
        }
        if (channel !== 'email' && createdAt >= fraudFrom && delivery !== 'failed') {
          insF.run(seq, account.id, createdAt, country, recipient.slice(0, -4), usedAt)
        }
      }
    })()
    const done = Math.min(first + BATCH - 1, o.n)
    if (done % 500_000 < BATCH || done === o.n) o.log(`  ${done} verifications, ${eventSeq - 1} events (${Math.round((performance.now() - t0) / 1000)} s)`)
  }
  for (const a of o.accounts) {
    const grant = 100_000_000
    db.run('INSERT INTO credit_ledger (account_id, kind, amount, verification_id, note, created_at) VALUES (?, ?, ?, NULL, ?, ?)', [
      a.id,
      'grant',
      grant,
      'perf',
      start,
    ])
    db.run('UPDATE accounts SET balance = ? WHERE id = ?', [grant - (spent.get(a.id) ?? 0), a.id])
  }
  fillFraud(db, o.now)
  await fillRollups(db, o)
  return { events: eventSeq - 1, ledger, deliveries }
}

/** The fraud guard's counters from its send rows (as the send and verify paths keep them), a few blocks, refusals. */
function fillFraud(db: Database, now: number): void {
  db.transaction(() => {
    for (const [kind, column] of [
      ['country', 'country'],
      ['prefix', 'prefix'],
    ]) {
      db.run(`INSERT INTO fraud_minutes (account_id, kind, scope, minute, sends, approved)
        SELECT account_id, '${kind}', ${column}, at / 60000, count(*), count(approved_at) FROM fraud_sends GROUP BY account_id, ${column}, at / 60000`)
    }
    db.run(`INSERT INTO fraud_countries (account_id, country, last_approved_at)
      SELECT account_id, country, max(approved_at) FROM fraud_sends WHERE approved_at IS NOT NULL GROUP BY account_id, country`)
    const block = db.prepare('INSERT INTO fraud_blocks (account_id, kind, scope, started_at, until, level, counts_from) VALUES (?, ?, ?, ?, ?, 0, 0)')
    block.run(1, 'prefix', '+99870012', now - 5 * 60_000, now + 10 * 60_000)
    block.run(1, 'country', 'UZ', now - 5 * 60_000, now + 10 * 60_000)
    block.run(2, 'prefix', '+23470403', now - 60_000, now + 14 * 60_000)
    const refusal = db.prepare('INSERT INTO console_refusals (minute, account_id, rule, country, refusals) VALUES (?, ?, ?, ?, ?)')
    for (let h = now - (now % HOUR) - 30 * DAY; h <= now; h += HOUR) {
      refusal.run(h + 7 * 60_000, 1, 'conversion', 'UZ', 3)
      refusal.run(h + 21 * 60_000, 1, 'geo', 'KP', 1)
      refusal.run(h + 40 * 60_000, 2, 'ip', 'NG', 2)
    }
  })()
}

/** The rollups as the rollup would leave them: its store's recounts of every hour, summed into quarter days and days; prefix sums of 24 h. */
async function fillRollups(db: Database, o: FillOptions): Promise<void> {
  const store = new SqlStatsStore(sqliteRunner(db), SQLITE)
  const t0 = performance.now()
  const first = o.now - (o.now % HOUR) - o.days * DAY - HOUR
  const hours: RollupRow[] = []
  const rows: RollupRow[] = []
  for (let h = first; h <= o.now; h += HOUR) {
    const minutes = h + HOUR > o.now - 3 * HOUR
    const counted = await store.recount(h, h + HOUR, minutes ? SPAN.minute : SPAN.hour)
    if (minutes) rows.push(...counted)
    hours.push(...sum(counted, SPAN.hour, () => h))
  }
  rows.push(...hours)
  for (const span of [SPAN.quarterDay, SPAN.day]) rows.push(...sum(hours, span, (r) => r.at - (r.at % span)))
  const prefixFrom = o.now - (o.now % HOUR) - 23 * HOUR
  const sums = new Map<string, PrefixRow>()
  const prefixHours: [number, PrefixRow[]][] = []
  for (let h = prefixFrom; h <= o.now; h += HOUR) {
    const counted = await store.prefixRecount(h, h + HOUR)
    prefixHours.push([h, counted])
    for (const p of counted) {
      const k = `${p.accountId}|${p.prefix}`
      const had = sums.get(k)
      if (had) {
        had.sends += p.sends
        had.approved += p.approved
      } else sums.set(k, { ...p })
    }
  }
  db.run('BEGIN')
  await store.saveRows(rows, [])
  for (const [h, counted] of prefixHours) await store.savePrefixHour(h, counted, [])
  await store.addToPrefixes([...sums.values()])
  const end = (table: string, key: string) => (db.query(`SELECT coalesce(max(${key}), 0) AS n FROM ${table}`).get() as { n: number }).n
  const cursor = { verifications: end('verifications', 'seq'), events: end('events', 'seq'), ledger: end('credit_ledger', 'id'), at: o.now, prefixFrom }
  db.run('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value', [ROLLUP_CURSOR, JSON.stringify(cursor)])
  db.run('COMMIT')
  o.log(`  rollups: ${rows.length} rows, ${sums.size} prefixes (${Math.round((performance.now() - t0) / 1000)} s)`)
}

function sum(rows: RollupRow[], span: Span, at: (r: RollupRow) => number): RollupRow[] {
  const out = new Map<string, RollupRow>()
  for (const r of rows) {
    const s = { ...r, span, at: at(r) }
    const k = `${s.at}|${s.accountId}|${s.channel}|${s.country}|${s.provider}`
    const had = out.get(k)
    if (had) for (const c of ROLLUP_COUNTS) had[c] += r[c]
    else out.set(k, s)
  }
  return [...out.values()]
}
