/**
 * The audit log's domain side (docs/console.md#audit-log): who acts (an
 * `Actor`), the actions it records, and reading it back.
 *
 * The operator use cases (admin.ts, fraud-admin.ts, webhooks.ts,
 * operators.ts) write their entry inside the transaction of the action
 * itself, so an action never lands without its entry nor an entry without
 * its action. A service built without an actor (tests, set-up code) writes
 * none; the CLI always passes one (`cli/common.ts`), and the console passes
 * the signed-in operator (`service.as(actor)`).
 */
import { OperatorError } from './operator-error.ts'
import type { AuditRow, AuditSource, Repos, Storage } from './ports/index.ts'

export interface Actor {
  /** The console's signed-in operator, or for the CLI the OS user (or `--operator`). */
  operator: string
  source: AuditSource
}

export const AUDIT_ACTIONS = [
  'account.created',
  'account.code_length_changed',
  'account.settings_changed',
  'key.created',
  'key.rotated',
  'key.disabled',
  'key.enabled',
  'key.revoked',
  'credits.added',
  'credits.deducted',
  'fraud.unblocked',
  'event.replayed',
  'events.failed_replayed',
  'webhook.added',
  'webhook.removed',
  'webhook.secret_rotated',
  'operator.added',
  'operator.disabled',
  'operator.enabled',
  'operator.password_reset',
  'operator.role_changed',
  'recipient.searched',
] as const
export type AuditAction = (typeof AUDIT_ACTIONS)[number]

/** Appends the action's entry inside the caller's transaction; nothing without an actor. */
export async function audit(
  r: Repos,
  actor: Actor | undefined,
  at: number,
  action: AuditAction,
  subject: string,
  details: Record<string, unknown> = {},
): Promise<void> {
  if (actor === undefined) return
  await r.audit.append({ at, operator: actor.operator, source: actor.source, action, subject, details })
}

export interface AuditFilter {
  since?: number
  until?: number
  action?: string
  operator?: string
  beforeId?: number
  limit?: number
}

export const AUDIT_PAGE_MAX = 1000

/** Reads the audit log, newest first. */
export function listAudit(storage: Storage, f: AuditFilter = {}): Promise<AuditRow[]> {
  if (f.action !== undefined && !(AUDIT_ACTIONS as readonly string[]).includes(f.action)) {
    throw new OperatorError(`unknown audit action '${f.action}'; known actions: ${AUDIT_ACTIONS.join(', ')}`)
  }
  const limit = f.limit ?? 100
  if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_PAGE_MAX)
    throw new OperatorError(`limit must be a whole number from 1 to ${AUDIT_PAGE_MAX}, got '${limit}'`)
  return storage.read((r) => r.audit.list({ ...f, limit }))
}
