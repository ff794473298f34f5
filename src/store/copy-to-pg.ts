/**
 * `otpd db copy --to postgres://…`: a SQLite database copied into an empty,
 * migrated PostgreSQL one, so a deployment can move to several nodes (what is
 * copied: docs/multi-node.md#moving-a-sqlite-deployment). Ids are kept, every
 * identity and the verification sequence moved past the largest id copied, and
 * each balance spread over its rows (store/pg/balances.ts). The source is one
 * SQLite snapshot and the target one transaction, so a failed copy leaves the
 * target empty; counts, balances and a ledger digest are compared before COMMIT.
 */
import type { Database } from 'bun:sqlite'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import type { SQL } from 'bun'
import { pgConnection } from '../config/database.ts'
import type { Config } from '../config/schema.ts'
import { BALANCE_SQL } from './pg/balances.ts'
import { openClient } from './pg/client.ts'
import { applyMigrations } from './pg/migrate.ts'
import { POSTGRES } from './sql/dialect.ts'
import { openDatabase } from './sqlite/db.ts'
import { checkNotInUse } from './sqlite/start-checks.ts'

/** Tables only the PostgreSQL schema has, written from copied rows: each account's balance, spread (store/pg/balances.ts). */
const TARGET_ONLY_TABLES = ['account_balances']

/** Refused before anything was written; the message is the one line the CLI prints. */
export class CopyRefusedError extends Error {}

/** The tables of both schemas (store/sqlite/schema.ts, store/pg/schema.ts), in foreign-key order. */
export const COPIED_TABLES = [
  'accounts',
  'api_keys',
  'credit_ledger',
  'verifications',
  'verification_legacy_ids',
  'verification_steps',
  'key_hits',
  'recipient_failures',
  'settings',
  // Webhooks and the event outbox, Idempotency-Key records and the fraud guard: copied whole (the sweep prunes them as on SQLite).
  'webhook_endpoints',
  'events',
  'event_deliveries',
  'idempotency_keys',
  'fraud_sends',
  'fraud_minutes',
  'fraud_countries',
  'fraud_blocks',
  // The console: operators before their sessions; the audit log whole (it is never swept).
  'operators',
  'console_sessions',
  'console_sign_in_attempts',
  'audit_log',
  // The console's rollups, with their cursor (in settings): the rollup goes on from where it was.
  'console_rollups',
  'console_refusals',
  'console_gaps',
  'console_prefix_hours',
  'console_prefixes',
] as const
type Table = (typeof COPIED_TABLES)[number]

export interface CopyOptions {
  /** Now, in ms (the injected clock). */
  now: number
  /** `retention.days`: verifications that expired longer ago than this are not copied. */
  retentionDays: number
  /** Brings the target's schema up to date (the engine's migrations, under their advisory lock). */
  migrate(target: SQL): Promise<void>
  /** Rows per INSERT. */
  batch?: number
}

export interface AccountCheck {
  name: string
  balance: number
  ledgerRows: number
}

export interface CopyResult {
  /** Rows copied per table (equal on both sides: checked). */
  counts: Record<Table, number>
  /** Rows of the source left out (outside retention, closed windows). */
  skipped: { verifications: number; verification_legacy_ids: number; key_hits: number; recipient_failures: number }
  accounts: AccountCheck[]
  /** SHA-256 of the whole ledger in id order, equal on both sides. */
  ledgerDigest: string
}

const DAY_MS = 86_400_000
const KEY_WINDOW_MS = 60_000

/** The WHERE clause of each table's rows to copy (the sweep's criteria, inverted: store/sqlite/sweep.ts). */
function kept(now: number, retentionDays: number): Record<Table, { where: string; params: number[] }> {
  const all = { where: '1 = 1', params: [] }
  return {
    accounts: all,
    api_keys: all,
    credit_ledger: all,
    verifications: { where: 'expires_at >= ?', params: [now - retentionDays * DAY_MS] },
    verification_legacy_ids: { where: 'seq IN (SELECT seq FROM verifications WHERE expires_at >= ?)', params: [now - retentionDays * DAY_MS] },
    verification_steps: { where: 'verification_seq IN (SELECT seq FROM verifications WHERE expires_at >= ?)', params: [now - retentionDays * DAY_MS] },
    key_hits: { where: 'at >= ?', params: [now - KEY_WINDOW_MS] },
    recipient_failures: { where: 'at >= ?', params: [now - DAY_MS] },
    settings: all,
    webhook_endpoints: all,
    events: all,
    event_deliveries: all,
    idempotency_keys: all,
    fraud_sends: all,
    fraud_minutes: all,
    fraud_countries: all,
    fraud_blocks: all,
    operators: all,
    console_sessions: all,
    console_sign_in_attempts: all,
    audit_log: all,
    console_rollups: all,
    console_refusals: all,
    console_gaps: all,
    console_prefix_hours: all,
    console_prefixes: all,
  }
}

/** Columns written per table: SQLite's, except the target's own row ids. */
const BOOLEAN_COLUMNS: Partial<Record<Table, string[]>> = { verifications: ['charged'], accounts: ['test_recipients', 'custom_text'], fraud_sends: ['counted'] }
const ORDER: Record<Table, string> = {
  accounts: 'id',
  api_keys: 'id',
  credit_ledger: 'id',
  verifications: 'seq',
  verification_legacy_ids: 'seq',
  verification_steps: 'verification_seq, step',
  key_hits: 'key_id, seq',
  recipient_failures: 'rowid',
  settings: 'name',
  webhook_endpoints: 'id',
  events: 'seq',
  event_deliveries: 'event_seq, endpoint_id',
  idempotency_keys: 'rowid',
  fraud_sends: 'seq',
  fraud_minutes: 'account_id, kind, scope, minute',
  fraud_countries: 'account_id, country',
  fraud_blocks: 'account_id, kind, scope',
  operators: 'id',
  console_sessions: 'token_hash',
  console_sign_in_attempts: 'seq',
  audit_log: 'id',
  console_rollups: 'span, at, account_id, channel, country, provider',
  console_refusals: 'minute, account_id, rule, country',
  console_gaps: 'source, seq',
  console_prefix_hours: 'hour, account_id, prefix',
  console_prefixes: 'account_id, prefix',
}

/** Identity columns moved past the largest id copied, and the verification sequence. */
const SEQUENCES: [table: string, column: string][] = [
  ['accounts', 'id'],
  ['api_keys', 'id'],
  ['credit_ledger', 'id'],
  ['webhook_endpoints', 'id'],
  ['events', 'seq'],
  ['operators', 'id'],
  ['console_sign_in_attempts', 'seq'],
  ['audit_log', 'id'],
]

/** Where a copy went, and what it copied and checked. */
export interface DatabaseCopy {
  /** The SQLite file copied, as an absolute path. */
  from: string
  /** The PostgreSQL database, as its URL without password. */
  to: string
  result: CopyResult
}

/**
 * `otpd db copy`: the SQLite database `config` names into the PostgreSQL
 * database at `to` (password from the variable `passwordEnv`, the URL, or
 * PGPASSWORD), both opened here and closed before it returns. Each refusal is
 * one sentence for the CLI to print.
 */
export async function copyDatabaseToPostgres(
  config: Config,
  env: Record<string, string | undefined>,
  target: { to: string; passwordEnv?: string; now: number },
): Promise<DatabaseCopy> {
  const { to, passwordEnv } = target
  if (config.database.url !== undefined) {
    throw new Error(
      "this configuration already uses PostgreSQL (database.url): db copy copies the SQLite database named by database.path; run it with the SQLite deployment's config",
    )
  }
  if (!/^postgres(ql)?:\/\//.test(to) || !URL.canParse(to)) throw new Error(`--to must be a postgres:// URL (postgres://user@host:5432/database), not '${to}'`)
  if (passwordEnv !== undefined && !env[passwordEnv]) throw new Error(`--password-env names ${passwordEnv}, which is not set`)
  const path = config.database.path
  if (path === ':memory:' || !existsSync(path)) throw new Error(`no database at ${resolve(path)} (pass the SQLite deployment's --config)`)
  checkNotInUse(resolve(path), 'run otpd db copy again')
  const conn = pgConnection({ ...config.database, url: to, password_env: passwordEnv }, env)
  const source = openDatabase({ path, synchronous: config.database.synchronous, busyTimeoutMs: config.database.busy_timeout_ms })
  const sql = openClient(conn, { poolSize: 1, lockTimeoutMs: config.database.busy_timeout_ms })
  try {
    await sql.unsafe('SELECT 1').catch((err: unknown) => {
      throw new Error(`cannot reach the PostgreSQL database ${conn.display}: ${err instanceof Error ? err.message : String(err)}`)
    })
    const result = await copyToPostgres(source.$client, sql, {
      now: target.now,
      retentionDays: config.retention.days,
      migrate: (s) => applyMigrations(s, conn.display),
    })
    return { from: resolve(path), to: conn.display, result }
  } finally {
    await sql.close({ timeout: 5 }).catch(() => undefined)
    source.$client.close()
  }
}

export async function copyToPostgres(source: Database, target: SQL, opts: CopyOptions): Promise<CopyResult> {
  await refuseUnlessEmpty(target, false)
  await opts.migrate(target)
  const batch = opts.batch ?? 500
  const which = kept(opts.now, opts.retentionDays)
  source.run('BEGIN')
  try {
    const result = (await target.begin(async (tx) => {
      // Again inside the transaction, with the tables locked: no node may write meanwhile.
      await tx.unsafe(`LOCK TABLE ${[...COPIED_TABLES, ...TARGET_ONLY_TABLES].join(', ')} IN EXCLUSIVE MODE`)
      await refuseUnlessEmpty(tx as unknown as SQL, true)
      // The source has its own `default` account (with its id): the target's untouched one makes way.
      await tx.unsafe(`DELETE FROM account_balances WHERE account_id IN (SELECT id FROM accounts WHERE name = 'default')`)
      await tx.unsafe(`DELETE FROM accounts WHERE name = 'default'`)
      const counts = {} as Record<Table, number>
      for (const table of COPIED_TABLES) counts[table] = await copyTable(source, tx as unknown as SQL, table, which[table], batch)
      for (const a of source.query<{ id: number; balance: number }, []>('SELECT id, balance FROM accounts ORDER BY id').iterate()) {
        await tx.unsafe(BALANCE_SQL.create, [a.id, Math.max(a.balance, 0)])
        if (a.balance < 0) await tx.unsafe(BALANCE_SQL.take, [a.id, -a.balance])
      }
      for (const [table, column] of SEQUENCES) {
        await tx.unsafe(`SELECT setval(pg_get_serial_sequence('${table}', '${column}'), coalesce((SELECT max(${column}) FROM ${table}), 0) + 1, false)`)
      }
      await tx.unsafe(`SELECT setval('verifications_seq', coalesce((SELECT max(seq) FROM verifications), 0) + 1, false)`)
      const check = await compare(source, tx as unknown as SQL, counts)
      return { box: { counts, ...check } }
    })) as { box: Omit<CopyResult, 'skipped'> }
    const skipped = skippedRows(source, opts)
    return { ...result.box, skipped }
  } finally {
    source.run('COMMIT')
  }
}

/** Throws CopyRefusedError naming the first of our tables that has rows, or a foreign table. */
async function refuseUnlessEmpty(target: SQL, migrated: boolean): Promise<void> {
  const tables = (await target.unsafe(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`)) as {
    table_name: string
  }[]
  const names = new Set(tables.map((t) => t.table_name))
  for (const t of COPIED_TABLES) {
    if (!names.has(t)) {
      if (migrated) throw new Error(`the target has no table ${t} after its migrations`)
      continue
    }
    // The migrations create the account `default`, untouched: that much is
    // empty. Its balance is 0 in the schema of the migrations applied so far:
    // a target an earlier otpd migrated keeps it in `accounts.balance`.
    const noCredits = names.has('account_balances')
      ? 'NOT EXISTS (SELECT 1 FROM account_balances b WHERE b.account_id = accounts.id AND b.balance <> 0)'
      : 'balance = 0'
    const pristine =
      t === 'accounts'
        ? ` WHERE NOT (name = 'default' AND ${noCredits} AND created_at = 0 AND code_length IS NULL AND allowed_countries IS NULL AND daily_credit_limit IS NULL AND test_recipients)`
        : ''
    const rows = (await target.unsafe(`SELECT count(*)::int AS n FROM ${t}${pristine}`)) as { n: number }[]
    if (rows[0]!.n > 0) {
      throw new CopyRefusedError(
        `the target database is not empty (its table ${t} has ${rows[0]!.n} row${rows[0]!.n === 1 ? '' : 's'}): db copy writes only into an empty database; create a new one (createdb) and copy into it`,
      )
    }
  }
  const foreign = [...names].filter((n) => !(COPIED_TABLES as readonly string[]).includes(n) && !TARGET_ONLY_TABLES.includes(n) && !n.startsWith('__drizzle'))
  if (foreign.length > 0) {
    throw new CopyRefusedError(
      `the target database is not empty (it has the table${foreign.length > 1 ? 's' : ''} ${foreign.slice(0, 3).join(', ')}): db copy writes only into an empty database; create a new one (createdb) and copy into it`,
    )
  }
}

/**
 * Columns only the SQLite schema has, derived there for its own look-ups:
 * `events.verification_seq` (the verification's row number, SQLite's index for
 * an event's sequence). PostgreSQL finds events by their ids and
 * `verification_id` directly, so they are not copied; nor is SQLite's
 * `event_legacy_ids` table (ids of events from before SQLite numbered them).
 * `accounts.balance` is written as PostgreSQL's rows of the balance instead.
 */
const SQLITE_ONLY_COLUMNS: Partial<Record<Table, string[]>> = { events: ['verification_seq'], accounts: ['balance'] }

async function copyTable(source: Database, tx: SQL, table: Table, which: { where: string; params: number[] }, batch: number): Promise<number> {
  const booleans = BOOLEAN_COLUMNS[table] ?? []
  const sqliteOnly = SQLITE_ONLY_COLUMNS[table] ?? []
  const query = source.query<Record<string, unknown>, number[]>(`SELECT * FROM ${table} WHERE ${which.where} ORDER BY ${ORDER[table]}`)
  let rows: Record<string, unknown>[] = []
  let n = 0
  const flush = async () => {
    if (rows.length === 0) return
    await tx`INSERT INTO ${tx(table)} ${tx(rows)}`
    n += rows.length
    rows = []
  }
  for (const row of query.iterate(...which.params)) {
    for (const c of sqliteOnly) delete row[c]
    for (const b of booleans) row[b] = row[b] === null ? null : Boolean(row[b])
    for (const [k, v] of Object.entries(row)) if (v instanceof Uint8Array) row[k] = Buffer.from(v)
    rows.push(row)
    if (rows.length >= batch) await flush()
  }
  await flush()
  return n
}

/** Counts, balances and the ledger digest on both sides; throws when they differ. */
async function compare(source: Database, tx: SQL, counts: Record<Table, number>): Promise<Omit<CopyResult, 'skipped' | 'counts'>> {
  const problems: string[] = []
  for (const t of COPIED_TABLES) {
    const there = ((await tx.unsafe(`SELECT count(*)::int AS n FROM ${t}`)) as { n: number }[])[0]!.n
    if (there !== counts[t]) problems.push(`${t}: ${counts[t]} rows read, ${there} in the target`)
  }
  const accountsHere = source
    .query<AccountCheck, []>(
      `SELECT a.name, a.balance, (SELECT count(*) FROM credit_ledger l WHERE l.account_id = a.id) AS ledgerRows FROM accounts a ORDER BY a.name`,
    )
    .all()
  const accountsThere = (
    (await tx.unsafe(
      `SELECT name, ${POSTGRES.accountBalance}::bigint AS balance, (SELECT count(*) FROM credit_ledger l WHERE l.account_id = accounts.id)::int AS "ledgerRows" FROM accounts ORDER BY name`,
    )) as AccountCheck[]
  ).map((a) => ({ name: a.name, balance: Number(a.balance), ledgerRows: Number(a.ledgerRows) }))
  if (JSON.stringify(accountsHere) !== JSON.stringify(accountsThere)) problems.push('account balances or ledger sizes differ')
  const here = ledgerDigest(
    source.query<LedgerLine, []>('SELECT id, account_id, kind, amount, verification_id, note, created_at FROM credit_ledger ORDER BY id').all(),
  )
  const lines = (await tx.unsafe('SELECT id, account_id, kind, amount, verification_id, note, created_at FROM credit_ledger ORDER BY id')) as LedgerLine[]
  const there = ledgerDigest(lines)
  if (here !== there) problems.push('the ledgers differ')
  if (problems.length > 0) throw new Error(`the copy does not match its source (nothing was written): ${problems.join('; ')}`)
  return { accounts: accountsHere, ledgerDigest: here }
}

interface LedgerLine {
  id: number | string
  account_id: number
  kind: string
  amount: number | string
  verification_id: string | null
  note: string | null
  created_at: number | string
}

/** One engine-neutral line per ledger row (bigints come back as strings from one driver, numbers from the other). */
export function ledgerDigest(rows: LedgerLine[]): string {
  const h = createHash('sha256')
  for (const r of rows)
    h.update(JSON.stringify([Number(r.id), Number(r.account_id), r.kind, Number(r.amount), r.verification_id, r.note, Number(r.created_at)]) + '\n')
  return h.digest('hex')
}

function skippedRows(source: Database, opts: CopyOptions): CopyResult['skipped'] {
  const count = (sql: string, ...p: number[]) => source.query<{ n: number }, number[]>(sql).get(...p)!.n
  const oldest = opts.now - opts.retentionDays * DAY_MS
  return {
    verifications: count('SELECT count(*) AS n FROM verifications WHERE expires_at < ?', oldest),
    verification_legacy_ids: count(
      'SELECT count(*) AS n FROM verification_legacy_ids WHERE seq NOT IN (SELECT seq FROM verifications WHERE expires_at >= ?)',
      oldest,
    ),
    key_hits: count('SELECT count(*) AS n FROM key_hits WHERE at < ?', opts.now - KEY_WINDOW_MS),
    recipient_failures: count('SELECT count(*) AS n FROM recipient_failures WHERE at < ?', opts.now - DAY_MS),
  }
}
