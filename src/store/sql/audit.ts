/**
 * The audit log (otp/ports/audit.ts AuditLog): the statements both engines
 * run. A filter left out is bound as a value that lets every row through
 * (0, the largest safe integer, ''), so one statement serves every query.
 */
import type { AuditQuery, AuditRow } from '../../otp/ports/index.ts'
import { num, type Param, type Row } from './values.ts'

export const AUDIT_SQL = {
  append: 'INSERT INTO audit_log (at, operator, source, action, subject, details) VALUES ($1, $2, $3, $4, $5, $6)',
  list: `SELECT id, at, operator, source, action, subject, details FROM audit_log
    WHERE at >= $1 AND at < $2 AND id < $3 AND ($4 = '' OR action = $4) AND ($5 = '' OR operator = $5)
    ORDER BY id DESC LIMIT $6`,
} as const

export function auditListParams(q: AuditQuery): Param[] {
  const max = Number.MAX_SAFE_INTEGER
  return [q.since ?? 0, q.until ?? max, q.beforeId ?? max, q.action ?? '', q.operator ?? '', q.limit]
}

export function toAuditRow(r: Row): AuditRow {
  return {
    id: num(r.id),
    at: num(r.at),
    operator: r.operator as string,
    source: r.source as AuditRow['source'],
    action: r.action as string,
    subject: r.subject as string,
    details: JSON.parse(r.details as string) as Record<string, unknown>,
  }
}
