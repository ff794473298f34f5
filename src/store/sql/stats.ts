/**
 * The console's rollups and reads (otp/ports/stats.ts): the statements both
 * engines run, and their row mappers. Every aggregate the console shows is
 * read from `console_rollups` / `console_refusals`; the verifications table
 * is only ever read along an index, a bounded range at a time
 * (docs/console.md#performance).
 */
import type { PrefixRow, RefusalRow, RollupRow, RollupSource, Span } from '../../otp/ports/index.ts'
import type { Dialect } from './dialect.ts'
import { num, type Row } from './values.ts'

/** The settings row of the rollup's cursor. */
export const ROLLUP_CURSOR = 'console_rollup'

const COUNTS = 'sends, accepted, delivered, undelivered, failed, refunded, approved, monitored, checked'
const ROLLUP_COLUMNS = `span, at, account_id, channel, country, provider, ${COUNTS}`
/** `$n` of account -1: every account. */
const ACCOUNT = (p: string) => `(CAST(${p} AS INTEGER) < 0 OR account_id = CAST(${p} AS INTEGER))`

/** What each source gives the rollup (otp/ports/stats.ts SourceRow). */
function sourceSelect(source: RollupSource, d: Dialect): { select: string; key: string } {
  switch (source) {
    case 'verifications':
      return {
        select:
          "SELECT seq, account_id, id AS verification_id, seq AS verification_seq, created_at AS at, 'verification' AS kind, NULL AS body FROM verifications",
        key: 'seq',
      }
    case 'events':
      return {
        select: `SELECT seq, account_id, verification_id, ${d.eventVerificationSeq} AS verification_seq, occurred_at AS at, type AS kind, CASE WHEN type = 'send.blocked' THEN body END AS body FROM events`,
        key: 'seq',
      }
    case 'ledger':
      return {
        select: 'SELECT id AS seq, account_id, verification_id, NULL AS verification_seq, created_at AS at, kind, NULL AS body FROM credit_ledger',
        key: 'id',
      }
  }
}

const SOURCES: RollupSource[] = ['verifications', 'events', 'ledger']

function bySource<T>(f: (s: RollupSource) => T): Record<RollupSource, T> {
  return Object.fromEntries(SOURCES.map((s) => [s, f(s)])) as Record<RollupSource, T>
}

/**
 * The statuses of docs/api.md#verification-status as conditions on a row at
 * the time `now()` binds, only where one is needed (otp/status.ts decideStatus, without the recipient-wide failure
 * cap, which needs a look-up per row).
 */
export function statusCondition(status: string, now: () => string): string {
  const open = `v.status = 'active' AND v.used_at IS NULL`
  switch (status) {
    case 'canceled':
      return "v.status = 'canceled'"
    case 'failed':
      return "v.status = 'failed'"
    case 'approved':
      return "v.status = 'active' AND v.used_at IS NOT NULL"
    case 'expired':
      return `${open} AND v.expires_at <= ${now()}`
    case 'locked': {
      const t = now()
      return `${open} AND v.expires_at > ${t} AND v.locked_until > ${t}`
    }
    default: {
      const t = now()
      return `${open} AND v.expires_at > ${t} AND (v.locked_until IS NULL OR v.locked_until <= ${t})`
    }
  }
}

export function statsSql(d: Dialect) {
  return {
    cursor: 'SELECT value FROM settings WHERE name = $1',
    createCursor: 'INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING RETURNING name',
    moveCursor: 'UPDATE settings SET value = $3 WHERE name = $1 AND value = $2 RETURNING name',
    sourceRows: bySource((s) => {
      const { select, key } = sourceSelect(s, d)
      return `${select} WHERE ${key} > $1 ORDER BY ${key} LIMIT $2`
    }),
    sourceRowsAt: bySource((s) => {
      const { select, key } = sourceSelect(s, d)
      return `${select} WHERE ${key} IN (${d.intList('$1')})`
    }),
    sourceEnd: bySource((s) => {
      const { key } = sourceSelect(s, d)
      const table = s === 'ledger' ? 'credit_ledger' : s
      return `SELECT coalesce(max(${key}), 0) AS n FROM ${table}`
    }),
    createdAt: `SELECT seq, id, created_at FROM verifications WHERE seq IN (${d.intList('$1')})`,
    /**
     * The real sends created in [$1, $2), per bucket of $3 ms, account,
     * channel, country and provider: a range of verifications_created. A
     * refund is looked up in the ledger (its partial index): a receipt may
     * have turned an `unknown` (refunded) delivery into `delivered`.
     */
    recount: `SELECT v.account_id, v.created_at - (v.created_at % $3) AS at, v.channel, coalesce(v.country, '') AS country,
        coalesce(v.delivery_provider, '') AS provider, count(*) AS sends,
        sum(CASE WHEN v.delivery IN ('accepted', 'delivered', 'undelivered') THEN 1 ELSE 0 END) AS accepted,
        sum(CASE WHEN v.delivery = 'delivered' THEN 1 ELSE 0 END) AS delivered,
        sum(CASE WHEN v.delivery = 'undelivered' THEN 1 ELSE 0 END) AS undelivered,
        sum(CASE WHEN v.delivery = 'failed' THEN 1 ELSE 0 END) AS failed,
        sum(CASE WHEN EXISTS (SELECT 1 FROM credit_ledger r WHERE r.verification_id = v.id AND r.kind = 'refund') THEN 1 ELSE 0 END) AS refunded,
        count(v.used_at) AS approved, count(v.fraud_monitored) AS monitored, count(v.checked_by) AS checked
      FROM verifications v WHERE v.created_at >= $1 AND v.created_at < $2 AND v.test_mode IS NULL
      GROUP BY 1, 2, 3, 4, 5`,
    rows: `SELECT ${ROLLUP_COLUMNS} FROM console_rollups WHERE span = $1 AND at >= $2 AND at < $3 AND ${ACCOUNT('$4')}`,
    saveRow: `INSERT INTO console_rollups (${ROLLUP_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
      ON CONFLICT (span, at, account_id, channel, country, provider) DO UPDATE SET sends = excluded.sends, accepted = excluded.accepted,
        delivered = excluded.delivered, undelivered = excluded.undelivered, failed = excluded.failed, refunded = excluded.refunded,
        approved = excluded.approved, monitored = excluded.monitored, checked = excluded.checked`,
    deleteRow: 'DELETE FROM console_rollups WHERE span = $1 AND at = $2 AND account_id = $3 AND channel = $4 AND country = $5 AND provider = $6',
    dropRows: 'DELETE FROM console_rollups WHERE span = $1 AND at < $2',
    addRefusals: `INSERT INTO console_refusals (minute, account_id, rule, country, refusals) VALUES ($1, $2, $3, $4, $5)
      ON CONFLICT (minute, account_id, rule, country) DO UPDATE SET refusals = console_refusals.refusals + excluded.refusals`,
    dropRefusals: 'DELETE FROM console_refusals WHERE minute < $1',
    refusals: `SELECT minute, account_id, rule, country, refusals FROM console_refusals WHERE minute >= $1 AND minute < $2 AND ${ACCOUNT('$3')}`,
    gaps: 'SELECT seq, seen_at FROM console_gaps WHERE source = $1 ORDER BY seq',
    // One statement for a batch's gaps ($2: a JSON array of numbers). `WHERE true`: SQLite would read ON as a join's.
    addGaps: `INSERT INTO console_gaps (source, seq, seen_at) SELECT CAST($1 AS text), g.value, CAST($3 AS bigint) FROM (${d.intList('$2')}) AS g
      WHERE true ON CONFLICT (source, seq) DO NOTHING`,
    dropGaps: `DELETE FROM console_gaps WHERE source = $1 AND seq IN (${d.intList('$2')})`,
    prefixRecount: `SELECT account_id, prefix, count(*) AS sends, count(approved_at) AS approved FROM fraud_sends
      WHERE at >= $1 AND at < $2 AND ${d.isTrue('counted')} GROUP BY account_id, prefix`,
    prefixHour: 'SELECT account_id, prefix, sends, approved FROM console_prefix_hours WHERE hour = $1',
    savePrefixHour: `INSERT INTO console_prefix_hours (hour, account_id, prefix, sends, approved) VALUES ($1, $2, $3, $4, $5)
      ON CONFLICT (hour, account_id, prefix) DO UPDATE SET sends = excluded.sends, approved = excluded.approved`,
    deletePrefixHour: 'DELETE FROM console_prefix_hours WHERE hour = $1 AND account_id = $2 AND prefix = $3',
    dropPrefixHours: 'DELETE FROM console_prefix_hours WHERE hour < $1',
    addToPrefix: `INSERT INTO console_prefixes (account_id, prefix, sends, approved) VALUES ($1, $2, $3, $4)
      ON CONFLICT (account_id, prefix) DO UPDATE SET sends = console_prefixes.sends + excluded.sends, approved = console_prefixes.approved + excluded.approved`,
    dropEmptyPrefixes: 'DELETE FROM console_prefixes WHERE account_id = $1 AND prefix = $2 AND sends <= 0',
    /** Most sends first (console_prefixes_sends, or _account for one account): the top rows only are read. */
    topPrefixes: 'SELECT account_id, prefix, sends, approved FROM console_prefixes ORDER BY sends DESC, account_id, prefix LIMIT $1',
    topAccountPrefixes: 'SELECT account_id, prefix, sends, approved FROM console_prefixes WHERE account_id = $1 ORDER BY sends DESC, prefix LIMIT $2',
  } as const
}

export function toRollup(r: Row): RollupRow {
  return {
    span: num(r.span) as Span,
    at: num(r.at),
    accountId: num(r.account_id),
    channel: r.channel as string,
    country: r.country as string,
    provider: r.provider as string,
    sends: num(r.sends),
    accepted: num(r.accepted),
    delivered: num(r.delivered),
    undelivered: num(r.undelivered),
    failed: num(r.failed),
    refunded: num(r.refunded),
    approved: num(r.approved),
    monitored: num(r.monitored),
    checked: num(r.checked),
  }
}

export function rollupParams(r: RollupRow): (string | number)[] {
  return [
    r.span,
    r.at,
    r.accountId,
    r.channel,
    r.country,
    r.provider,
    r.sends,
    r.accepted,
    r.delivered,
    r.undelivered,
    r.failed,
    r.refunded,
    r.approved,
    r.monitored,
    r.checked,
  ]
}

export function toPrefix(r: Row): PrefixRow {
  return { accountId: num(r.account_id), prefix: r.prefix as string, sends: num(r.sends), approved: num(r.approved) }
}

export function toRefusal(r: Row): RefusalRow {
  return { minute: num(r.minute), accountId: num(r.account_id), rule: r.rule as string, country: r.country as string, refusals: num(r.refusals) }
}
