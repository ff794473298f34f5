/**
 * The ledger invariants, one set for both engines, read straight from the
 * database while otpd may still run (one read snapshot per check: a SQLite
 * read transaction, or a PostgreSQL REPEATABLE READ one), after a crash,
 * or after a clean stop. Every test and script that checks the ledger uses
 * this module. `target` is a SQLite file's path or a `postgres://` URL.
 *
 * The rules, as the README states them (Credits; Delivery receipts; Faults
 * and recovery) and as src/otp/send.ts and src/otp/recovery.ts write them:
 *
 * - Per account, the ledger balances: grants - debits + refunds = balance,
 *   and the balance is never negative. A ledger amount is positive; its kind
 *   gives the sign.
 * - A debit or refund names the verification it was for, which exists.
 * - A verification that was not charged (a test recipient) has no debit and
 *   no refund.
 * - A charged verification has exactly one debit (a workflow send: one per
 *   started step, each refunded as its own delivery says), and its delivery is one of
 *   `sending`, `accepted`, `failed`, `unknown`, `delivered`, `undelivered`.
 * - The refund follows the delivery, never the status. A send no provider
 *   took is settled `failed` and refunded in the same transaction
 *   (otp/settlement.ts refundUnsettled); one whose outcome was never recorded is
 *   settled `unknown` and refunded by recovery. So a `failed` or `unknown`
 *   delivery has exactly one refund, and a `sending` or `accepted` one has
 *   none. A `delivered` or `undelivered` one has none, or one: a receipt for
 *   an `unknown` delivery records the vendor's word and the refund stays.
 * - `status = 'failed'` (out of use) comes only with a `failed` delivery,
 *   the settlement that sets it: a failed status with any other delivery is a
 *   violation of its own, and never counts as refunded by itself (a canceled
 *   verification whose delivery then failed keeps `canceled` and is refunded
 *   all the same).
 * - `settledAfterMs`: recovery has had time to run, so no charged send older
 *   than that is still `sending`; `allSettled` (every process stopped
 *   cleanly): none is.
 *
 * And what clients were told (`Acknowledged`): a send answered 200 is
 * charged once, in force (status active) and never `failed`; a verify
 * answered `Code verified successfully` is used; a lockout 429 is still
 * locked; each `Invalid code` was counted on the verification (while unused)
 * and in the recipient's failures; granted credits are in the ledger.
 */
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { forSqlite, POSTGRES, SQLITE } from '../../src/store/sql/dialect.ts'
import { bool, num, numOrNull, type Param, type Row } from '../../src/store/sql/values.ts'

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

/** Sends answered 200, by id (when they were answered does not matter to the checks). */
export function sends(ids: Iterable<string>): Partial<Acknowledged> {
  return { sends: new Map([...ids].map((id) => [id, 0])) }
}

export interface CheckOptions {
  /** Recovery has had time to run: a charged send still `sending` older than this many ms is a violation. */
  settledAfterMs?: number
  /** Every process stopped cleanly: nothing may be left `sending`. */
  allSettled?: boolean
  /** The time lockouts and `settledAfterMs` are measured at (default: now; otpd runs on the wall clock). */
  now?: number
}

export interface LedgerCheck {
  violations: string[]
  /** How many facts were checked. */
  checks: number
}

/** A verification with its ledger entries. */
export interface LedgerRow {
  seq: number
  id: string
  status: string
  charged: boolean
  delivery: string | null
  createdAt: number
  usedAt: number | null
  failedAttempts: number
  lockedUntil: number | null
  /** hex */
  recipientHash: string
  debits: number
  refunds: number
}

/** One read snapshot of either engine. */
interface Snapshot {
  all(text: string, params?: Param[]): Promise<Row[]>
  /** The engine's own consistency checks (SQLite: integrity and foreign keys); what fails, [] when all holds. */
  integrity(): Promise<string[]>
}

const LEDGER_SQL = {
  /** `balance`: the engine's balance of `accounts` (Dialect.accountBalance). */
  balances: (balance: string) => `SELECT accounts.name, ${balance} AS balance,
      coalesce((SELECT sum(amount) FROM credit_ledger WHERE account_id = accounts.id AND kind = 'grant'), 0) AS grants,
      coalesce((SELECT sum(amount) FROM credit_ledger WHERE account_id = accounts.id AND kind = 'debit'), 0) AS debits,
      coalesce((SELECT sum(amount) FROM credit_ledger WHERE account_id = accounts.id AND kind = 'refund'), 0) AS refunds
    FROM accounts ORDER BY accounts.name`,
  verifications: `WITH l AS (
      SELECT verification_id, sum(CASE WHEN kind = 'debit' THEN 1 ELSE 0 END) AS debits, sum(CASE WHEN kind = 'refund' THEN 1 ELSE 0 END) AS refunds
      FROM credit_ledger WHERE verification_id IS NOT NULL GROUP BY verification_id)
    SELECT v.seq, v.id, v.status, v.charged, v.delivery, v.created_at, v.used_at, v.failed_attempts, v.locked_until, v.recipient_hash,
      coalesce(l.debits, 0) AS debits, coalesce(l.refunds, 0) AS refunds
    FROM verifications v LEFT JOIN l ON l.verification_id = v.id ORDER BY v.seq`,
  // A workflow's steps (docs/api.md#workflows): each started one was charged, and its refund follows its own delivery.
  steps: 'SELECT verification_seq, step, started_at, ended_at, delivery FROM verification_steps WHERE started_at IS NOT NULL ORDER BY verification_seq, step',
  // Verification ids are not indexed on SQLite (rows are found by number): matched in code, not by a correlated subquery.
  charges: `SELECT verification_id FROM credit_ledger WHERE kind <> 'grant'`,
  recipientFailures: 'SELECT count(*) AS n FROM recipient_failures WHERE recipient_hash = $1',
} as const

const CHARGED_DELIVERIES = ['sending', 'accepted', 'failed', 'unknown', 'delivered', 'undelivered']

function isPostgres(target: string): boolean {
  return /^postgres(ql)?:\/\//.test(target)
}

/** Runs `fn` on one read snapshot of the database. */
async function withSnapshot<T>(target: string, fn: (s: Snapshot) => Promise<T>): Promise<T> {
  if (isPostgres(target)) {
    return pgSnapshot(target, (sql) =>
      fn({
        all: async (text, params = []) => [...((await sql.unsafe(text, params)) as Row[])],
        // PostgreSQL keeps its own constraints; nothing to ask it here.
        integrity: async () => [],
      }),
    )
  }
  // Read-write, as otpd opens it: after a crash, the first connection recovers the WAL.
  const db = new Database(target, { strict: true })
  try {
    db.run('PRAGMA busy_timeout = 5000')
    db.run('BEGIN')
    try {
      return await fn({
        all: async (text, params = []) => db.query(forSqlite(text)).all(...(params as never[])) as Row[],
        integrity: async () => {
          const problems: string[] = []
          const integrity = db.query<{ integrity_check: string }, []>('PRAGMA integrity_check').all()
          if (integrity.length !== 1 || integrity[0]!.integrity_check !== 'ok') problems.push(`integrity_check: ${JSON.stringify(integrity)}`)
          const fk = db.query('PRAGMA foreign_key_check').all()
          if (fk.length > 0) problems.push(`foreign_key_check: ${JSON.stringify(fk.slice(0, 3))}`)
          return problems
        },
      })
    } finally {
      db.run('COMMIT')
    }
  } finally {
    db.close()
  }
}

/** Runs `fn` in one read-only REPEATABLE READ transaction on a short-lived PostgreSQL connection. */
export async function pgSnapshot<T>(url: string, fn: (sql: SQL) => Promise<T>): Promise<T> {
  const db = new SQL(url, { max: 1 })
  try {
    return await db.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', (tx) => fn(tx as unknown as SQL))
  } finally {
    await db.close()
  }
}

async function rowsOf(s: Snapshot): Promise<LedgerRow[]> {
  return (await s.all(LEDGER_SQL.verifications)).map((r) => ({
    seq: num(r.seq),
    id: String(r.id),
    status: String(r.status),
    charged: bool(r.charged),
    delivery: r.delivery === null ? null : String(r.delivery),
    createdAt: num(r.created_at),
    usedAt: numOrNull(r.used_at),
    failedAttempts: num(r.failed_attempts),
    lockedUntil: numOrNull(r.locked_until),
    recipientHash: Buffer.from(r.recipient_hash as Uint8Array).toString('hex'),
    debits: num(r.debits),
    refunds: num(r.refunds),
  }))
}

/** Every verification with its ledger entries, oldest first. */
export function ledgerRows(target: string): Promise<LedgerRow[]> {
  return withSnapshot(target, rowsOf)
}

export async function rowOf(target: string, id: string): Promise<LedgerRow | undefined> {
  return (await ledgerRows(target)).find((r) => r.id === id)
}

/** Charged verifications neither acknowledged nor refunded: what a 500 must never leave in force. */
export async function inForceUnacknowledged(target: string, acknowledged: Iterable<string>): Promise<LedgerRow[]> {
  const ack = new Set(acknowledged)
  return (await ledgerRows(target)).filter((r) => r.charged && !ack.has(r.id) && r.refunds === 0)
}

/**
 * A workflow send's deliveries, one per started step: an ended step's own,
 * and the current step's (the verification row's). Null for a send without one.
 */
async function stepDeliveries(s: Snapshot): Promise<Map<number, (string | null)[]>> {
  const out = new Map<number, (string | null)[]>()
  for (const r of await s.all(LEDGER_SQL.steps)) {
    const seq = num(r.verification_seq)
    const list = out.get(seq) ?? []
    list.push(r.ended_at === null ? CURRENT : r.delivery === null ? null : String(r.delivery))
    out.set(seq, list)
  }
  return out
}
/** Stands for the verification row's delivery in stepDeliveries. */
const CURRENT = '(current)'

/** Whether `refunds` fits the deliveries of a verification's charges (one each). */
function refundsFit(deliveries: (string | null)[], refunds: number): boolean {
  const allowed = deliveries.map(refundsAllowed)
  const least = allowed.reduce((n, a) => n + Math.min(...a), 0)
  const most = allowed.reduce((n, a) => n + Math.max(...a), 0)
  return refunds >= least && refunds <= most
}

/** The refunds a charged verification must have, by its delivery (see the module comment). */
function refundsAllowed(delivery: string | null): number[] {
  if (delivery === 'failed' || delivery === 'unknown') return [1]
  if (delivery === 'delivered' || delivery === 'undelivered') return [0, 1]
  return [0]
}

/** Checks every invariant of the module comment; `violations` is [] when all hold. */
export async function checkLedger(target: string, acknowledged: Partial<Acknowledged> = {}, opts: CheckOptions = {}): Promise<LedgerCheck> {
  // What was acknowledged BEFORE the snapshot begins: clients may go on meanwhile
  // (servers still running), and an answer that arrives after the snapshot was
  // taken is not one the snapshot must show.
  const ack: Acknowledged = {
    sends: new Map(acknowledged.sends ?? []),
    verified: new Set(acknowledged.verified ?? []),
    invalid: new Map(acknowledged.invalid ?? []),
    locked: new Map(acknowledged.locked ?? []),
    granted: acknowledged.granted ?? 0,
  }
  return withSnapshot(target, async (s) => {
    const now = opts.now ?? Date.now()
    const violations: string[] = []
    let checks = 0
    const expect = (ok: boolean, what: () => string) => {
      checks++
      if (!ok) violations.push(what())
    }

    const integrity = await s.integrity()
    expect(integrity.length === 0, () => integrity.join('; '))

    let grantsTotal = 0
    for (const r of await s.all(LEDGER_SQL.balances((isPostgres(target) ? POSTGRES : SQLITE).accountBalance))) {
      const [balance, grants, debits, refunds] = [num(r.balance), num(r.grants), num(r.debits), num(r.refunds)]
      grantsTotal += grants
      expect(grants - debits + refunds === balance, () => `account ${r.name}: grants ${grants} - debits ${debits} + refunds ${refunds} != balance ${balance}`)
      expect(balance >= 0, () => `account ${r.name}: negative balance ${balance}`)
    }
    expect(grantsTotal >= ack.granted, () => `acknowledged grants ${ack.granted} > grants in the ledger ${grantsTotal}`)

    const rows = await rowsOf(s)
    const steps = await stepDeliveries(s)
    const byId = new Map(rows.map((r) => [r.id, r]))
    const charges = await s.all(LEDGER_SQL.charges)
    const orphans = charges.filter((l) => l.verification_id === null || !byId.has(String(l.verification_id))).length
    expect(orphans === 0, () => `${orphans} debits/refunds without their verification`)

    for (const r of rows) {
      const what = `verification ${r.id} (charged ${r.charged}, delivery ${r.delivery}, status ${r.status}): ${r.debits} debits, ${r.refunds} refunds`
      if (!r.charged) {
        expect(r.debits + r.refunds === 0, () => what)
        continue
      }
      const started = steps.get(r.seq)
      if (started) {
        const deliveries = started.map((d) => (d === CURRENT ? r.delivery : d))
        expect(r.debits === deliveries.length && refundsFit(deliveries, r.refunds), () => `${what}: workflow steps ${JSON.stringify(deliveries)}`)
      } else expect(r.debits === 1 && refundsAllowed(r.delivery).includes(r.refunds), () => what)
      expect(CHARGED_DELIVERIES.includes(r.delivery ?? ''), () => `${what}: no delivery state`)
      expect(r.status !== 'failed' || r.delivery === 'failed', () => `${what}: failed, but its delivery is not`)
      if (r.delivery === 'sending') {
        expect(!opts.allSettled, () => `${what}: still sending after a clean stop`)
        if (opts.settledAfterMs !== undefined)
          expect(
            r.createdAt >= now - opts.settledAfterMs,
            () => `${what}: still sending ${now - r.createdAt} ms after it was created (recovery did not settle it)`,
          )
      }
    }

    for (const id of ack.sends.keys()) {
      const r = byId.get(id)
      // A 200 promised a charged, verifiable code: delivered (`accepted`, then a
      // receipt's status), `sending` or `unknown` when its outcome could not be recorded, never `failed`.
      if (r === undefined) expect(false, () => `acknowledged send ${id}: not in the database`)
      else
        expect(
          // A workflow's last step may fail after an earlier one reached the recipient: in force all the same.
          r.charged && (r.debits === 1 || steps.has(r.seq)) && r.status === 'active' && (r.delivery !== 'failed' || steps.has(r.seq)),
          () => `acknowledged send ${id}: charged ${r.charged}, status ${r.status}, delivery ${r.delivery}, ${r.debits} debits, ${r.refunds} refunds`,
        )
    }
    for (const id of ack.verified) expect(byId.get(id)?.usedAt != null, () => `acknowledged verify ${id}: not used`)
    for (const [id, at] of ack.locked) {
      const r = byId.get(id)
      expect(
        r !== undefined && r.usedAt === null && r.lockedUntil !== null && r.lockedUntil > now,
        () => `acknowledged lockout ${id} (at ${at}): not locked now (${JSON.stringify(r)})`,
      )
    }
    const failuresByRecipient = new Map<string, number>()
    for (const [id, n] of ack.invalid) {
      const r = byId.get(id)
      if (r === undefined) continue // a send it was for is reported above if it was acknowledged
      if (r.usedAt === null) expect(r.failedAttempts >= n, () => `verification ${id}: ${n} acknowledged failures, ${r.failedAttempts} stored`)
      failuresByRecipient.set(r.recipientHash, (failuresByRecipient.get(r.recipientHash) ?? 0) + n)
    }
    for (const [hash, n] of failuresByRecipient) {
      const stored = num((await s.all(LEDGER_SQL.recipientFailures, [Buffer.from(hash, 'hex')]))[0]!.n)
      expect(stored >= n, () => `recipient ${hash.slice(0, 8)}: ${n} acknowledged failures, ${stored} in recipient_failures`)
    }
    return { violations, checks }
  })
}

/** The violations of checkLedger alone: [] when every invariant holds. */
export async function ledgerViolations(target: string, acknowledged: Partial<Acknowledged> = {}, opts: CheckOptions = {}): Promise<string[]> {
  return (await checkLedger(target, acknowledged, opts)).violations
}
