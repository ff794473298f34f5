/**
 * The invariants every fault must leave intact, read straight from the
 * database file (the server may be running: WAL readers do not block it).
 * The contract: `verifications.delivery` is `sending` (debited, delivery under
 * way), `accepted`, `failed` (refunded), `unknown` (the process stopped during
 * delivery; refunded at recovery) or NULL (test recipients, never charged).
 */
import { Database } from 'bun:sqlite'

export interface LedgerRow {
  id: string
  status: string
  charged: number
  delivery: string | null
  created_at: number
  used_at: number | null
  debits: number
  refunds: number
}

function open<T>(path: string, fn: (db: Database) => T): T {
  const db = new Database(path)
  try {
    db.run('PRAGMA busy_timeout = 5000')
    return fn(db)
  } finally {
    db.close()
  }
}

/** Every verification with its ledger entries. */
export function verificationRows(path: string): LedgerRow[] {
  return open(path, (db) => {
    const cols = db.query<{ name: string }, []>('PRAGMA table_info(verifications)').all()
    const delivery = cols.some((c) => c.name === 'delivery') ? 'v.delivery' : `'(no delivery column)'`
    return db
      .query<LedgerRow, []>(
        `WITH l AS (SELECT verification_id, sum(kind = 'debit') AS debits, sum(kind = 'refund') AS refunds
                    FROM credit_ledger WHERE verification_id IS NOT NULL GROUP BY verification_id)
         SELECT v.id, v.status, v.charged, ${delivery} AS delivery, v.created_at, v.used_at,
                coalesce(l.debits, 0) AS debits, coalesce(l.refunds, 0) AS refunds
         FROM verifications v LEFT JOIN l ON l.verification_id = v.id ORDER BY v.seq`,
      )
      .all()
  })
}

export const rowOf = (path: string, id: string) => verificationRows(path).find((r) => r.id === id)

export interface Expectations {
  /** Ids whose send answered 200: charged, active, never `failed`. */
  acknowledged?: Iterable<string>
  /** Recovery has run: no `sending` row older than this many ms remains. */
  settledAfterMs?: number
}

/** Violations of the ledger, delivery and acknowledged-outcome invariants; [] when all hold. */
export function ledgerViolations(path: string, expect: Expectations = {}): string[] {
  const v: string[] = []
  open(path, (db) => {
    const integrity = db.query<{ integrity_check: string }, []>('PRAGMA integrity_check').all()
    if (integrity.length !== 1 || integrity[0]!.integrity_check !== 'ok') v.push(`integrity_check: ${JSON.stringify(integrity)}`)
    const cols = db.query<{ name: string }, []>('PRAGMA table_info(verifications)').all()
    if (!cols.some((c) => c.name === 'delivery')) v.push('verifications.delivery does not exist')
    const accounts = db
      .query<{ name: string; balance: number; grants: number; debits: number; refunds: number }, []>(
        `SELECT a.name, a.balance,
           coalesce((SELECT sum(amount) FROM credit_ledger WHERE account_id = a.id AND kind = 'grant'), 0) AS grants,
           coalesce((SELECT sum(amount) FROM credit_ledger WHERE account_id = a.id AND kind = 'debit'), 0) AS debits,
           coalesce((SELECT sum(amount) FROM credit_ledger WHERE account_id = a.id AND kind = 'refund'), 0) AS refunds
         FROM accounts a`,
      )
      .all()
    for (const a of accounts) {
      if (a.grants - a.debits + a.refunds !== a.balance)
        v.push(`account ${a.name}: grants ${a.grants} - debits ${a.debits} + refunds ${a.refunds} != balance ${a.balance}`)
    }
    const orphans = db
      .query<{ n: number }, []>(
        `SELECT count(*) AS n FROM credit_ledger l WHERE kind != 'grant'
           AND (verification_id IS NULL OR NOT EXISTS (SELECT 1 FROM verifications v WHERE v.id = l.verification_id))`,
      )
      .get()!.n
    if (orphans > 0) v.push(`${orphans} debits/refunds without their verification`)
  })
  const rows = verificationRows(path)
  const now = Date.now()
  for (const r of rows) {
    const what = `verification ${r.id} (charged ${r.charged}, delivery ${r.delivery}, status ${r.status}): ${r.debits} debits, ${r.refunds} refunds`
    if (!r.charged) {
      if (r.debits + r.refunds !== 0) v.push(what)
      continue
    }
    if (r.debits !== 1) v.push(what)
    const refunded = r.delivery === 'failed' || r.delivery === 'unknown'
    if (r.refunds !== (refunded ? 1 : 0)) v.push(what)
    if (!['sending', 'accepted', 'failed', 'unknown'].includes(r.delivery ?? '')) v.push(`${what}: no delivery state`)
    if (expect.settledAfterMs !== undefined && r.delivery === 'sending' && r.created_at < now - expect.settledAfterMs)
      v.push(`${what}: still sending ${now - r.created_at} ms after it was created (recovery did not refund it)`)
  }
  // A 200 promised a charged, verifiable code. Its delivery is `accepted`, or
  // `unknown` when the outcome could not be recorded (refunded by recovery,
  // the code still verifiable), or still `sending` until recovery has run.
  const byId = new Map(rows.map((r) => [r.id, r]))
  for (const id of expect.acknowledged ?? []) {
    const r = byId.get(id)
    const kept = ['accepted', 'unknown'].includes(r?.delivery ?? '') || (r?.delivery === 'sending' && expect.settledAfterMs === undefined)
    if (!r) v.push(`acknowledged send ${id}: not in the database`)
    else if (!r.charged || r.debits !== 1 || r.status !== 'active' || !kept)
      v.push(`acknowledged send ${id}: charged ${r.charged}, status ${r.status}, delivery ${r.delivery}, ${r.debits} debits, ${r.refunds} refunds`)
  }
  return v
}

/** Charged verifications neither acknowledged nor refunded: what a 500 must never leave behind. */
export function inForceUnacknowledged(path: string, acknowledged: Iterable<string>): LedgerRow[] {
  const ack = new Set(acknowledged)
  return verificationRows(path).filter((r) => r.charged && !ack.has(r.id) && r.refunds === 0)
}
