/** @jsxImportSource hono/jsx */
/** The audit log: every action taken in the console or the CLI, newest first. */
import { type PageFrame, page, scopedHref } from '../layout.tsx'
import { Pager, Table, Time } from '../widgets.tsx'

/** An entry as the audit log keeps it (otp/ports/audit.ts). */
export interface AuditRowView {
  at: number
  operator: string
  source: string
  action: string
  subject: string
  details: Record<string, unknown>
}

const details = (d: Record<string, unknown>): string =>
  Object.entries(d)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join('; ')

export function auditPage(frame: PageFrame, list: { rows: AuditRowView[]; next: number | null }, later = false): string {
  const rows = list.rows
  return page(
    frame,
    <>
      <Table
        caption="Actions in this period, newest first"
        id="audit"
        rows={rows}
        columns={[
          { label: 'When', cell: (r) => <Time at={r.at} /> },
          { label: 'Operator', cell: (r) => r.operator },
          { label: 'Source', cell: (r) => r.source },
          { label: 'Action', cell: (r) => <code>{r.action}</code> },
          { label: 'Subject', cell: (r) => r.subject },
          { label: 'Details', cell: (r) => <span class="wrap">{details(r.details)}</span> },
        ]}
      />
      <Pager
        of="the audit log"
        next={list.next === null ? null : scopedHref('/console/audit', frame, { before: String(list.next) })}
        first={later ? scopedHref('/console/audit', frame) : null}
      />
    </>,
  )
}
