/**
 * The ledger invariants (test/fault/ledger.ts, scripts/lib/invariants.ts) in
 * their PostgreSQL form, read from the database by URL while nodes may still
 * run: each query is one snapshot (REPEATABLE READ), so a check never sees
 * half of a transaction.
 *
 * The contract is the engine's: `verifications.delivery` is `sending`
 * (debited, delivery under way), `accepted`, `failed` (refunded), `unknown`
 * (the outcome was never recorded; refunded by recovery) or NULL (test
 * recipients, never charged). A ledger row's amount is positive and its kind
 * gives the sign; an account's balance is kept equal to its ledger.
 */
import { SQL } from 'bun'
import type { Acknowledged } from './invariants.ts'

export interface PgLedgerRow {
  id: string
  status: string
  charged: boolean
  delivery: string | null
  created_at: number
  used_at: number | null
  failed_attempts: number
  locked_until: number | null
  recipient_hash: string
  debits: number
  refunds: number
}

export interface PgCheckOptions {
  /** Recovery has had time to run: a charged send still `sending` older than this many ms is a violation. */
  settledAfterMs?: number
  /** Every node stopped cleanly: nothing may be left `sending`. */
  allSettled?: boolean
}

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v))
/** A row as the driver returns it: bigints as strings, so every figure goes through Number(). */
type Raw = Record<string, unknown>
const rowsOf = async (p: Promise<unknown>) => (await p) as Raw[]
const str = (v: unknown) => String(v)
const strOrNull = (v: unknown) => (v === null || v === undefined ? null : String(v))

/** Every verification with its ledger entries, in one snapshot. */
export async function pgVerificationRows(sql: SQL): Promise<PgLedgerRow[]> {
  const rows = await rowsOf(
    sql.unsafe(`
    WITH l AS (SELECT verification_id, count(*) FILTER (WHERE kind = 'debit') AS debits, count(*) FILTER (WHERE kind = 'refund') AS refunds
               FROM credit_ledger WHERE verification_id IS NOT NULL GROUP BY verification_id)
    SELECT v.id, v.status, (v.charged)::int AS charged, v.delivery, v.created_at, v.used_at, v.failed_attempts, v.locked_until,
           encode(v.recipient_hash, 'hex') AS recipient_hash, coalesce(l.debits, 0) AS debits, coalesce(l.refunds, 0) AS refunds
    FROM verifications v LEFT JOIN l ON l.verification_id = v.id ORDER BY v.seq`),
  )
  return rows.map((r) => ({
    id: str(r.id),
    status: str(r.status),
    charged: Number(r.charged) === 1,
    delivery: strOrNull(r.delivery),
    created_at: Number(r.created_at),
    used_at: num(r.used_at),
    failed_attempts: Number(r.failed_attempts),
    locked_until: num(r.locked_until),
    recipient_hash: str(r.recipient_hash),
    debits: Number(r.debits),
    refunds: Number(r.refunds),
  }))
}

export interface AccountBalance {
  name: string
  balance: number
  grants: number
  debits: number
  refunds: number
}

export async function pgBalances(sql: SQL): Promise<AccountBalance[]> {
  const rows = await rowsOf(
    sql.unsafe(`
    SELECT a.name, a.balance,
      coalesce((SELECT sum(amount) FROM credit_ledger WHERE account_id = a.id AND kind = 'grant'), 0) AS grants,
      coalesce((SELECT sum(amount) FROM credit_ledger WHERE account_id = a.id AND kind = 'debit'), 0) AS debits,
      coalesce((SELECT sum(amount) FROM credit_ledger WHERE account_id = a.id AND kind = 'refund'), 0) AS refunds
    FROM accounts a ORDER BY a.name`),
  )
  return rows.map((r) => ({ name: str(r.name), balance: Number(r.balance), grants: Number(r.grants), debits: Number(r.debits), refunds: Number(r.refunds) }))
}

/** Runs `fn` in one read-only REPEATABLE READ transaction on a short-lived connection. */
export async function pgSnapshot<T>(url: string, fn: (sql: SQL) => Promise<T>): Promise<T> {
  const db = new SQL(url, { max: 1 })
  try {
    return await db.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', (tx) => fn(tx as unknown as SQL))
  } finally {
    await db.close()
  }
}

/** Violations of the ledger, delivery and acknowledged-outcome invariants; [] when all hold. */
export async function pgLedgerViolations(url: string, acknowledged: Partial<Acknowledged> = {}, opts: PgCheckOptions = {}): Promise<string[]> {
  // What was acknowledged BEFORE the snapshot begins: clients may go on meanwhile
  // (nodes still serving), and an answer that arrives after the snapshot was taken
  // is not one the snapshot must show.
  const ack: Partial<Acknowledged> = {
    sends: new Map(acknowledged.sends ?? []),
    verified: new Set(acknowledged.verified ?? []),
    invalid: new Map(acknowledged.invalid ?? []),
    locked: new Map(acknowledged.locked ?? []),
    granted: acknowledged.granted,
  }
  return pgSnapshot(url, async (sql) => {
    const v: string[] = []
    let grantsTotal = 0
    for (const a of await pgBalances(sql)) {
      grantsTotal += a.grants
      if (a.grants - a.debits + a.refunds !== a.balance)
        v.push(`account ${a.name}: grants ${a.grants} - debits ${a.debits} + refunds ${a.refunds} != balance ${a.balance}`)
      if (a.balance < 0) v.push(`account ${a.name}: negative balance ${a.balance}`)
    }
    if (ack.granted !== undefined && grantsTotal < ack.granted) v.push(`acknowledged grants ${ack.granted} > grants in the ledger ${grantsTotal}`)
    const orphans = Number(
      (
        await rowsOf(
          sql.unsafe(`SELECT count(*) AS n FROM credit_ledger l WHERE kind != 'grant'
        AND (verification_id IS NULL OR NOT EXISTS (SELECT 1 FROM verifications v WHERE v.id = l.verification_id))`),
        )
      )[0]!.n,
    )
    if (orphans > 0) v.push(`${orphans} debits/refunds without their verification`)

    const rows = await pgVerificationRows(sql)
    const now = Date.now()
    for (const r of rows) {
      const what = `verification ${r.id} (charged ${r.charged}, delivery ${r.delivery}, status ${r.status}): ${r.debits} debits, ${r.refunds} refunds`
      if (!r.charged) {
        if (r.debits + r.refunds !== 0) v.push(what)
        continue
      }
      if (r.debits !== 1) v.push(what)
      const refunded = r.status === 'failed' || r.delivery === 'failed' || r.delivery === 'unknown'
      if (r.refunds !== (refunded ? 1 : 0)) v.push(what)
      if (!['sending', 'accepted', 'failed', 'unknown'].includes(r.delivery ?? '')) v.push(`${what}: no delivery state`)
      if (opts.allSettled && r.delivery === 'sending') v.push(`${what}: still sending after a clean stop`)
      if (opts.settledAfterMs !== undefined && r.delivery === 'sending' && r.created_at < now - opts.settledAfterMs)
        v.push(`${what}: still sending ${now - r.created_at} ms after it was created (recovery did not settle it)`)
    }
    const byId = new Map(rows.map((r) => [r.id, r]))
    for (const id of ack.sends?.keys() ?? []) {
      const r = byId.get(id)
      // A 200 promised a charged, verifiable code: delivered (`accepted`; `sending` or `unknown` when the outcome could not be recorded), never `failed`.
      if (!r) v.push(`acknowledged send ${id}: not in the database`)
      else if (!r.charged || r.debits !== 1 || r.status !== 'active' || r.delivery === 'failed')
        v.push(`acknowledged send ${id}: charged ${r.charged}, status ${r.status}, delivery ${r.delivery}, ${r.debits} debits, ${r.refunds} refunds`)
    }
    for (const id of ack.verified ?? []) {
      if (byId.get(id)?.used_at == null) v.push(`acknowledged verify ${id}: not used`)
    }
    for (const [id, at] of ack.locked ?? []) {
      const r = byId.get(id)
      if (!r || r.used_at !== null || r.locked_until === null || r.locked_until <= now)
        v.push(`acknowledged lockout ${id} (at ${at}): not locked now (${JSON.stringify(r)})`)
    }
    const failuresByRecipient = new Map<string, number>()
    for (const [id, n] of ack.invalid ?? []) {
      const r = byId.get(id)
      if (!r) continue
      if (r.used_at === null && r.failed_attempts < n) v.push(`verification ${id}: ${n} acknowledged failures, ${r.failed_attempts} stored`)
      failuresByRecipient.set(r.recipient_hash, (failuresByRecipient.get(r.recipient_hash) ?? 0) + n)
    }
    for (const [hash, n] of failuresByRecipient) {
      const stored = Number((await rowsOf(sql.unsafe(`SELECT count(*) AS n FROM recipient_failures WHERE recipient_hash = decode($1, 'hex')`, [hash])))[0]!.n)
      if (stored < n) v.push(`recipient ${hash.slice(0, 8)}: ${n} acknowledged failures, ${stored} in recipient_failures`)
    }
    return v
  })
}

/** Charged verifications neither acknowledged nor refunded: what a 500 must never leave in force. */
export async function pgInForceUnacknowledged(url: string, acknowledged: Iterable<string>): Promise<PgLedgerRow[]> {
  const ack = new Set(acknowledged)
  const rows = await pgSnapshot(url, pgVerificationRows)
  return rows.filter((r) => r.charged && !ack.has(r.id) && r.refunds === 0)
}
