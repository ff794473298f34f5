/**
 * The console's searches (otp/ports/stats.ts StatsReads): statements both
 * engines run. Each walks one index backwards from a keyset position, and a
 * filtered search looks at a bounded number of rows per page (its `budget`):
 * a page that finds fewer rows than asked says where it stopped, and the
 * next one goes on from there (docs/console.md#performance).
 */
import type { DeliveryRow, TimelineEvent, VerificationSearch, WorkflowStepRow } from '../../otp/ports/index.ts'
import type { Channel } from '../../otp/types.ts'
import type { Dialect } from './dialect.ts'
import { statusCondition } from './stats.ts'
import { num, type Param, type Row } from './values.ts'
import { VERIFICATION_COLUMNS } from './verifications.ts'

/** Rows after the keyset position ($n, $n+1) in the order created_at DESC, seq DESC. */
const AFTER = (at: string, seq: string) => `(v.created_at < ${at} OR (v.created_at = ${at} AND v.seq < ${seq}))`

/**
 * A search page: the statement and its parameters. The inner query walks
 * verifications_created backwards over at most `budget` rows of the period;
 * the outer one keeps those that match, newest first.
 */
export function searchStatement(q: VerificationSearch): { text: string; params: Param[] } {
  const params: Param[] = [q.from, q.before?.at ?? q.to, q.before?.seq ?? Number.MAX_SAFE_INTEGER, q.budget, q.limit]
  const inner = `SELECT v.seq FROM verifications v WHERE v.created_at >= $1 AND ${q.before ? AFTER('$2', '$3') : 'v.created_at < $2 AND v.seq < $3'}
    ORDER BY v.created_at DESC, v.seq DESC LIMIT $4`
  const where: string[] = []
  if (q.accountId !== null) where.push(`v.account_id = $${params.push(q.accountId)}`)
  if (q.country !== null) where.push(`v.country = $${params.push(q.country)}`)
  if (q.status !== null) where.push(statusCondition(q.status, () => `$${params.push(q.now)}`))
  // A join from the walked numbers (not `seq IN`): the walk is the only range read, whatever the planner.
  const text = `SELECT ${VERIFICATION_COLUMNS} FROM (${inner}) k JOIN verifications v ON v.seq = k.seq${where.length ? ` WHERE ${where.join(' AND ')}` : ''}
    ORDER BY v.created_at DESC, v.seq DESC LIMIT $5`
  return { text, params }
}

/** Where a page's walk stopped: the budget-th row of the period after the position (none: the period is done). */
export function searchEndStatement(q: VerificationSearch): { text: string; params: Param[] } {
  const params: Param[] = [q.from, q.before?.at ?? q.to, q.before?.seq ?? Number.MAX_SAFE_INTEGER, q.budget - 1]
  const text = `SELECT v.created_at, v.seq FROM verifications v WHERE v.created_at >= $1 AND ${q.before ? AFTER('$2', '$3') : 'v.created_at < $2 AND v.seq < $3'}
    ORDER BY v.created_at DESC, v.seq DESC LIMIT 1 OFFSET $4`
  return { text, params }
}

export function consoleReadSql(d: Dialect) {
  return {
    /** A recipient's verifications (verifications_recipient), newest first. */
    byRecipient: `SELECT ${VERIFICATION_COLUMNS} FROM verifications v WHERE v.recipient_hash = $1 AND v.created_at >= $2 AND ${AFTER('$3', '$4')}
      ORDER BY v.created_at DESC, v.seq DESC LIMIT $5`,
    /** A recipient's refused sends (events_recipient), newest first. */
    refusalsByRecipient: `SELECT e.id, e.account_id, e.occurred_at, e.body FROM events e
      WHERE e.recipient_hash = $1 AND e.recipient_hash IS NOT NULL AND e.occurred_at >= $2 AND e.occurred_at < $3
      ORDER BY e.occurred_at DESC LIMIT $4`,
    /**
     * Workflow sends of the verifications created in [$2, $3) ($4 the
     * account, -1: all), grouped by country, the channels of the steps that
     * started (a workflow has three at most, docs/api.md#workflows; a skipped
     * one is null), the last one started and whether it was approved. The
     * steps are walked along their key, only those numbered after the last
     * verification created before $1 (a minute before $2: numbers follow
     * creation times to within the nodes' clock skew), and each verification
     * is read once: workflowStepRows splits the groups into steps.
     */
    workflowSends: `SELECT coalesce(v.country, '') AS country, w.c0, w.c1, w.c2, w.last, count(*) AS sends,
        sum(CASE WHEN v.used_at IS NOT NULL THEN 1 ELSE 0 END) AS approved
      FROM (SELECT verification_seq, max(step) AS last, max(CASE WHEN step = 0 THEN channel END) AS c0,
          max(CASE WHEN step = 1 THEN channel END) AS c1, max(CASE WHEN step = 2 THEN channel END) AS c2
        FROM verification_steps
        WHERE verification_seq > coalesce((SELECT b.seq FROM verifications b WHERE b.created_at < $1 ORDER BY b.created_at DESC LIMIT 1), 0)
          AND started_at IS NOT NULL
        GROUP BY verification_seq) w
      JOIN verifications v ON v.seq = w.verification_seq
      WHERE v.created_at >= $2 AND v.created_at < $3 AND v.test_mode IS NULL AND (CAST($4 AS INTEGER) < 0 OR v.account_id = CAST($4 AS INTEGER))
      GROUP BY coalesce(v.country, ''), w.c0, w.c1, w.c2, w.last`,
    timeline: `SELECT e.sequence, e.type, e.occurred_at, e.body FROM verifications v JOIN events e ON ${d.eventOf('e', 'v')}
      WHERE v.seq = $1 AND v.id = $2 ORDER BY e.sequence`,
    /**
     * Deliveries of the newest $4 events below $1 that have any (the unique
     * index on (event_seq, endpoint_id), backwards), kept when they match;
     * $2 the period's start, $3 the account (-1: all), $5 the status ('' any).
     */
    deliveries: `SELECT d.event_seq, e.id AS event_id, e.type, e.account_id, e.occurred_at, d.endpoint_id, d.status, d.attempts, d.next_at,
        d.last_error, d.updated_at
      FROM (SELECT event_seq, endpoint_id FROM event_deliveries WHERE event_seq < $1 ORDER BY event_seq DESC LIMIT $4) k
      JOIN event_deliveries d ON d.event_seq = k.event_seq AND d.endpoint_id = k.endpoint_id
      JOIN events e ON e.seq = d.event_seq
      WHERE e.occurred_at >= $2 AND (CAST($3 AS INTEGER) < 0 OR e.account_id = CAST($3 AS INTEGER)) AND (CAST($5 AS TEXT) = '' OR d.status = CAST($5 AS TEXT))
      ORDER BY d.event_seq DESC, d.endpoint_id LIMIT $6`,
    /** The event number the walk of `deliveries` stops at (the budget-th delivery below $1). */
    deliveriesEnd: `SELECT k.event_seq, e.occurred_at FROM (SELECT event_seq FROM event_deliveries WHERE event_seq < $1 ORDER BY event_seq DESC LIMIT 1 OFFSET $2) k
      JOIN events e ON e.seq = k.event_seq`,
  } as const
}

/** How far before a period the walk of `workflowSteps` starts: more than twice the clock skew of any two nodes. */
export const WORKFLOW_LOOK_BACK_MS = 60_000

/**
 * The groups of `workflowSends` as started steps per country, step and
 * channel: each started step counts its group's sends, and the last one
 * started (current at approval: no step starts after it) its approvals.
 */
export function workflowStepRows(groups: Row[]): WorkflowStepRow[] {
  const out = new Map<string, WorkflowStepRow>()
  for (const g of groups) {
    const country = g.country as string
    const last = num(g.last)
    for (const [step, channel] of [g.c0, g.c1, g.c2].entries()) {
      if (channel === null || channel === undefined) continue
      const k = `${country}|${step}|${channel as string}`
      let row = out.get(k)
      if (!row) out.set(k, (row = { country, step, channel: channel as Channel, started: 0, approved: 0 }))
      row.started += num(g.sends)
      if (step === last) row.approved += num(g.approved)
    }
  }
  return [...out.values()]
}

export function toTimeline(r: Row): TimelineEvent {
  return { sequence: num(r.sequence), type: r.type as string, occurredAt: num(r.occurred_at), body: r.body as string }
}

export function toDelivery(r: Row): DeliveryRow {
  return {
    eventSeq: num(r.event_seq),
    eventId: r.event_id as string,
    type: r.type as string,
    accountId: num(r.account_id),
    occurredAt: num(r.occurred_at),
    endpointId: num(r.endpoint_id),
    status: r.status as DeliveryRow['status'],
    attempts: num(r.attempts),
    nextAt: num(r.next_at),
    lastError: (r.last_error as string | null) ?? null,
    updatedAt: num(r.updated_at),
  }
}
