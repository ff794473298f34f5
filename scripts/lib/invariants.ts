/**
 * Invariants read straight from the database file (after a crash, before the
 * next start): SQLite's own integrity, the credit ledger, and every outcome a
 * client was told about. Table and column names are the store's (src/store/sqlite/schema.ts).
 *
 * A charged send is settled when its delivery is `accepted` or it has its
 * refund (`failed`, or `unknown` once recovery gave up on it). One still
 * `sending` was in flight when the process died: the next start's recovery
 * (src/otp/recovery.ts) settles it, so only a clean stop must leave none.
 */
import { Database } from 'bun:sqlite'

/** What clients were told: the server answered, so it must be durable. */
export interface Acknowledged {
  /** verification id -> when the 200 arrived (a charged send) */
  sends: Map<string, number>
  /** ids whose verify answered `Code verified successfully` */
  verified: Set<string>
  /** id -> number of `Invalid code` answers */
  invalid: Map<string, number>
  /** id -> when a lockout 429 arrived */
  locked: Map<string, number>
  /** credits granted by `otpd credits add` runs that exited 0, in total */
  granted: number
}

export function emptyAcknowledged(): Acknowledged {
  return { sends: new Map(), verified: new Set(), invalid: new Map(), locked: new Map(), granted: 0 }
}

interface Row {
  id: string
  /** hex */
  recipient_hash: string
  status: string
  charged: number
  delivery: string | null
  used_at: number | null
  failed_attempts: number
  locked_until: number | null
}

export interface CheckResult {
  violations: string[]
  /** number of individual facts checked */
  checks: number
}

export interface CheckOptions {
  /** The server stopped cleanly (it answered everything it took): no charged send may be left `sending`. */
  allSettled?: boolean
}

export function checkDatabase(path: string, ack: Acknowledged, now: number, opts: CheckOptions = {}): CheckResult {
  const violations: string[] = []
  let checks = 0
  const expect = (ok: boolean, what: () => string) => {
    checks++
    if (!ok) violations.push(what())
  }
  const db = new Database(path)
  try {
    const integrity = db.query<{ integrity_check: string }, []>('PRAGMA integrity_check').all()
    expect(integrity.length === 1 && integrity[0]!.integrity_check === 'ok', () => `integrity_check: ${JSON.stringify(integrity)}`)
    const fk = db.query('PRAGMA foreign_key_check').all()
    expect(fk.length === 0, () => `foreign_key_check: ${JSON.stringify(fk.slice(0, 3))}`)

    // The ledger balances, per account.
    const accounts = db
      .query<{ id: number; name: string; balance: number; grants: number; debits: number; refunds: number }, []>(
        `SELECT a.id, a.name, a.balance,
           coalesce((SELECT sum(amount) FROM credit_ledger WHERE account_id = a.id AND kind = 'grant'), 0) AS grants,
           coalesce((SELECT sum(amount) FROM credit_ledger WHERE account_id = a.id AND kind = 'debit'), 0) AS debits,
           coalesce((SELECT sum(amount) FROM credit_ledger WHERE account_id = a.id AND kind = 'refund'), 0) AS refunds
         FROM accounts a`,
      )
      .all()
    let grantsTotal = 0
    for (const a of accounts) {
      grantsTotal += a.grants
      expect(
        a.grants - a.debits + a.refunds === a.balance,
        () => `account ${a.name}: grants ${a.grants} - debits ${a.debits} + refunds ${a.refunds} != balance ${a.balance}`,
      )
      expect(a.balance >= 0, () => `account ${a.name}: negative balance ${a.balance}`)
    }
    expect(grantsTotal >= ack.granted, () => `acknowledged grants ${ack.granted} > grants in the ledger ${grantsTotal}`)

    // Every charged verification has exactly one debit, and a refund iff its delivery failed or
    // ended unknown; no debit without its verification.
    const mismatched = db
      .query<{ id: string; charged: number; status: string; delivery: string | null; debits: number; refunds: number }, []>(
        `WITH l AS (
           SELECT verification_id, sum(kind = 'debit') AS debits, sum(kind = 'refund') AS refunds
           FROM credit_ledger WHERE verification_id IS NOT NULL GROUP BY verification_id)
         SELECT v.id, v.charged, v.status, v.delivery, coalesce(l.debits, 0) AS debits, coalesce(l.refunds, 0) AS refunds
         FROM verifications v LEFT JOIN l ON l.verification_id = v.id
         WHERE coalesce(l.debits, 0) != v.charged
            OR coalesce(l.refunds, 0) != (CASE WHEN v.charged = 1 AND (v.status = 'failed' OR v.delivery IN ('failed', 'unknown')) THEN 1 ELSE 0 END)`,
      )
      .all()
    checks++
    for (const m of mismatched)
      violations.push(`verification ${m.id} (charged ${m.charged}, ${m.status}, delivery ${m.delivery}) has ${m.debits} debits and ${m.refunds} refunds`)
    // A charged send records where its delivery stands; after a clean stop, none is still in flight.
    const undelivered = db
      .query<{ id: string; delivery: string | null }, []>(
        `SELECT id, delivery FROM verifications WHERE charged = 1 AND (delivery IS NULL OR delivery NOT IN ('sending', 'accepted', 'failed', 'unknown')${opts.allSettled ? " OR delivery = 'sending'" : ''})`,
      )
      .all()
    checks++
    for (const u of undelivered)
      violations.push(`charged verification ${u.id}: delivery ${u.delivery}${u.delivery === 'sending' ? ' after a clean stop (never settled)' : ''}`)
    // Acknowledged outcomes.
    const rows = new Map<string, Row>()
    for (const r of db
      .query<Row, []>('SELECT id, hex(recipient_hash) AS recipient_hash, status, charged, delivery, used_at, failed_attempts, locked_until FROM verifications')
      .all())
      rows.set(r.id, r)
    // Verification ids are not indexed (rows are found by number): matched here, not by a correlated subquery.
    const debited = db.query<{ verification_id: string | null }, []>(`SELECT verification_id FROM credit_ledger WHERE kind != 'grant'`).all()
    const orphans = debited.filter((l) => l.verification_id === null || !rows.has(l.verification_id)).length
    expect(orphans === 0, () => `${orphans} debits/refunds without their verification`)

    for (const id of ack.sends.keys()) {
      const r = rows.get(id)
      expect(r !== undefined, () => `acknowledged send ${id}: verification missing`)
      // Answered 200: delivered (`accepted`; `sending` or `unknown` when the outcome could not be recorded), never `failed`.
      if (r)
        expect(
          r.status === 'active' && r.charged === 1 && r.delivery !== 'failed',
          () => `acknowledged send ${id}: status ${r.status}, charged ${r.charged}, delivery ${r.delivery}`,
        )
    }
    for (const id of ack.verified) {
      const r = rows.get(id)
      expect(r?.used_at != null, () => `acknowledged verify ${id}: not used (${JSON.stringify(r)})`)
    }
    for (const [id, at] of ack.locked) {
      const r = rows.get(id)
      expect(
        r !== undefined && r.used_at === null && r.locked_until !== null && r.locked_until > now,
        () => `acknowledged lockout ${id} (at ${at}): not locked now (${JSON.stringify(r)})`,
      )
    }
    const failuresByRecipient = new Map<string, number>()
    for (const [id, n] of ack.invalid) {
      const r = rows.get(id)
      if (!r) continue // reported above as a missing send
      if (r.used_at === null) expect(r.failed_attempts >= n, () => `verification ${id}: ${n} acknowledged failures, ${r.failed_attempts} stored`)
      failuresByRecipient.set(r.recipient_hash, (failuresByRecipient.get(r.recipient_hash) ?? 0) + n)
    }
    const countFailures = db.query<{ n: number }, [string]>('SELECT count(*) AS n FROM recipient_failures WHERE recipient_hash = unhex(?)')
    for (const [hash, n] of failuresByRecipient) {
      const stored = countFailures.get(hash)!.n
      expect(stored >= n, () => `recipient ${hash.slice(0, 8)}: ${n} acknowledged failures, ${stored} in recipient_failures`)
    }
  } finally {
    db.close()
  }
  return { violations, checks }
}
