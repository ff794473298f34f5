/** `otpd audit list`: what operators did, in the console and through the CLI (docs/console.md#audit-log). */
import { Command, InvalidArgumentError } from 'commander'
import { AUDIT_PAGE_MAX, listAudit } from '../otp/audit.ts'
import type { AuditRow } from '../otp/ports/index.ts'
import { formatTime, integerArg, isoTime, printJson, printTable, withCore, subcommand, type CommonOptions } from './common.ts'

export function auditJson(e: AuditRow) {
  return { id: e.id, at: isoTime(e.at), operator: e.operator, source: e.source, action: e.action, subject: e.subject, details: e.details }
}

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 }

/** `24h`, `30m`, `7d` (that long before now), or an ISO 8601 time. */
function timeArg(name: string, now = Date.now()) {
  return (value: string): number => {
    const rel = /^([0-9]{1,6})([mhd])$/.exec(value.trim())
    if (rel) return now - Number(rel[1]) * UNITS[rel[2]!]!
    const at = Date.parse(value)
    if (/^[0-9]{4}-[0-9]{2}-[0-9]{2}/.test(value) && !Number.isNaN(at)) return at
    throw new InvalidArgumentError(`${name} takes a period before now (30m, 24h, 7d) or an ISO 8601 time (2026-01-31T12:00:00Z), got '${value}'`)
  }
}

export function auditCommand(): Command {
  const audit = new Command('audit').description('the audit log: every change made in the console or through the CLI, and by whom')

  subcommand(audit, 'list', 'list audit entries, newest first', 'otpd audit list', 'otpd audit list --since 24h --action credits.added --json')
    .option('--since <when>', 'entries at or after: 30m, 24h, 7d before now, or an ISO 8601 time', timeArg('--since'))
    .option('--until <when>', 'entries before: the same forms', timeArg('--until'))
    .option('--action <action>', 'only this action (key.created, credits.added, ...)')
    .option('--by <operator>', 'only entries of this operator (or CLI user)')
    .option('--limit <n>', `at most this many (1-${AUDIT_PAGE_MAX})`, integerArg('--limit', ` from 1 to ${AUDIT_PAGE_MAX}`), 100)
    .action((opts: CommonOptions & { since?: number; until?: number; action?: string; by?: string; limit: number }) =>
      withCore(
        opts,
        async ({ storage }) => {
          const rows = await listAudit(storage, { since: opts.since, until: opts.until, action: opts.action, operator: opts.by, limit: opts.limit })
          if (opts.json) return printJson(rows.map(auditJson))
          printTable(
            ['ID', 'TIME', 'OPERATOR', 'SOURCE', 'ACTION', 'SUBJECT', 'DETAILS'],
            rows.map((e) => [e.id, formatTime(e.at), e.operator, e.source, e.action, e.subject, JSON.stringify(e.details)]),
          )
        },
        { readOnly: true },
      ),
    )
  return audit
}
