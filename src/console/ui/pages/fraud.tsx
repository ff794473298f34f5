/**
 * Fraud guard: active blocks with their rule, scope, end and evidence (and an
 * unblock button); what monitor mode would have refused; conversion by
 * country and by prefix.
 */
import { type PageFrame, page } from '../layout.tsx'
import { ActionButton, fmt, Ratio, Table, Time } from '../widgets.tsx'

export interface BlockView {
  account: string
  rule: string
  kind: string
  scope: string
  until: number
  startedAt: number | null
  evidence: { sends: number; approvals: number; conversion: number | null }
}

export interface RefusalView {
  at: number
  account: string
  rule: string
  /** What it was about: a country, a prefix... */
  scope: string
  count: number
}

export interface ConversionRow {
  key: string
  sends: number
  approved: number
  conversion: number | null
}

export interface FraudView {
  mode: string
  blocks: BlockView[]
  monitor: RefusalView[]
  byCountry: ConversionRow[]
  byPrefix: ConversionRow[]
}

const conversionColumns = (label: string) => [
  { label, cell: (r: ConversionRow) => r.key },
  { label: 'Sends', num: true, cell: (r: ConversionRow) => fmt(r.sends) },
  { label: 'Approved', num: true, cell: (r: ConversionRow) => fmt(r.approved) },
  { label: 'Conversion', num: true, cell: (r: ConversionRow) => <Ratio value={r.conversion} /> },
]

export function fraudPage(frame: PageFrame, v: FraudView): string {
  return page(
    frame,
    <>
      <p>
        Mode: <strong data-fact="mode">{v.mode}</strong>. See the fraud guard's rules in the documentation (docs/fraud-guard.md).
      </p>
      <Table
        caption="Active blocks"
        id="blocks"
        empty="No active block."
        rows={v.blocks}
        columns={[
          { label: 'Account', cell: (b) => b.account },
          { label: 'Rule', cell: (b) => b.rule },
          { label: 'Scope', cell: (b) => `${b.kind} ${b.scope}` },
          { label: 'Since', cell: (b) => <Time at={b.startedAt} /> },
          { label: 'Until', cell: (b) => <Time at={b.until} /> },
          { label: 'Sends', num: true, cell: (b) => fmt(b.evidence.sends) },
          { label: 'Approvals', num: true, cell: (b) => fmt(b.evidence.approvals) },
          { label: 'Conversion', num: true, cell: (b) => <Ratio value={b.evidence.conversion} /> },
          {
            label: 'Action',
            cell: (b) => (
              <ActionButton
                action="/console/fraud/unblock"
                csrf={frame.csrf}
                label="Unblock"
                name={`${b.kind} ${b.scope} of ${b.account}`}
                fields={{ account: b.account, scope: b.scope }}
                confirm={`Unblock ${b.kind} ${b.scope} for ${b.account}?`}
              />
            ),
          },
        ]}
      />
      <Table
        caption="Would-be refusals (monitor mode)"
        id="monitor"
        empty="Nothing would have been refused in this period."
        rows={v.monitor}
        columns={[
          { label: 'Last', cell: (r) => <Time at={r.at} /> },
          { label: 'Account', cell: (r) => r.account },
          { label: 'Rule', cell: (r) => r.rule },
          { label: 'About', cell: (r) => r.scope },
          { label: 'Count', num: true, cell: (r) => fmt(r.count) },
        ]}
      />
      <div class="grid2">
        <Table caption="Conversion by country" id="conv-country" rows={v.byCountry} columns={conversionColumns('Country')} />
        <Table caption="Conversion by prefix" id="conv-prefix" rows={v.byPrefix} columns={conversionColumns('Prefix')} />
      </div>
    </>,
  )
}
