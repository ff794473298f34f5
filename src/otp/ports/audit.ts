/**
 * The audit log: every action taken in the console or through the CLI
 * (docs/console.md#audit-log). Appended to in the same transaction as the
 * action, so an action and its entry land together or not at all.
 */

export type AuditSource = 'console' | 'cli'

export interface AuditEntry {
  at: number
  operator: string
  source: AuditSource
  action: string
  subject: string
  /** Never a secret: names, ids, amounts, notes, settings. */
  details: Record<string, unknown>
}

export interface AuditRow extends AuditEntry {
  id: number
}

export interface AuditQuery {
  /** At or after (ms). */
  since?: number
  /** Before (ms). */
  until?: number
  action?: string
  operator?: string
  /** Only entries with an id below this (the next page, newest first). */
  beforeId?: number
  limit: number
}

export interface AuditLog {
  append(e: AuditEntry): Promise<void>
  /** Newest first. */
  list(q: AuditQuery): Promise<AuditRow[]>
}
