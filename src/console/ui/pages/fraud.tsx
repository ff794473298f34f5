/** @jsxImportSource hono/jsx */
/**
 * Fraud guard: active blocks with their rule, scope, end and evidence (and an
 * unblock button); what the guard refused, and what monitor mode let through
 * that a rule would have refused; conversion by country and by prefix.
 */
import type { Counts } from '../../../otp/console-stats.ts'
import type { FraudPage } from '../../../otp/console-fraud.ts'
import { type PageFrame, page } from '../layout.tsx'
import { ActionButton, Country, CountryNote, fmt, Ratio, Table, Time } from '../widgets.tsx'

type Conv = { key: string; sends: number; approved: number; conversion: number }

const conversionColumns = (label: string) => [
  { label, cell: (r: Conv) => r.key || 'unknown' },
  { label: 'Sends', num: true, cell: (r: Conv) => fmt(r.sends) },
  { label: 'Approved', num: true, cell: (r: Conv) => fmt(r.approved) },
  { label: 'Conversion', num: true, cell: (r: Conv) => <Ratio value={r.sends === 0 ? null : r.conversion} /> },
]

const conv = (c: { key: string; counts: Counts }): Conv => ({ key: c.key, sends: c.counts.sends, approved: c.counts.approved, conversion: c.counts.conversion })

export function fraudPage(frame: PageFrame, f: FraudPage): string {
  return page(
    frame,
    <>
      <p>
        Mode: <strong data-fact="mode">{f.mode}</strong>. The rules are described in the fraud guard's documentation (docs/fraud-guard.md).
      </p>
      <Table
        caption="Active blocks"
        id="blocks"
        empty="No active block."
        rows={f.blocks}
        columns={[
          { label: 'Account', cell: (b) => b.account },
          { label: 'Rule', cell: (b) => b.rule },
          { label: 'Scope', cell: (b) => `${b.kind} ${b.scope}` },
          { label: 'Since', cell: (b) => <Time at={b.startedAt} /> },
          { label: 'Until', cell: (b) => <Time at={b.until} /> },
          { label: 'Sends', num: true, cell: (b) => fmt(b.evidence.sends) },
          { label: 'Approvals', num: true, cell: (b) => fmt(b.evidence.approved) },
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
      <div class="grid2">
        <Table
          caption="Refused sends in this period"
          id="refusals"
          empty="Nothing was refused in this period."
          rows={f.refusals}
          columns={[
            { label: 'Rule', cell: (r) => r.rule },
            { label: 'Country', cell: (r) => <Country code={r.country} none="any" /> },
            { label: 'Refusals', num: true, cell: (r) => fmt(r.refusals) },
          ]}
        />
        <Table
          caption="Would-be refusals (monitor mode)"
          id="monitor"
          empty="Monitor mode let nothing through that a rule would have refused."
          rows={f.monitored}
          columns={[
            { label: 'Country', cell: (r) => <Country code={r.country} none="unknown" /> },
            { label: 'Sends let through', num: true, cell: (r) => fmt(r.sends) },
          ]}
        />
      </div>
      <Table caption="Conversion by country" id="conv-country" rows={f.countries.map(conv)} columns={conversionColumns('Country')} />
      <CountryNote />
      <Table
        caption="Conversion by prefix"
        id="conv-prefix"
        rows={f.prefixes.rows.map((p) => ({ key: `${p.prefix} (${p.account})`, sends: p.sends, approved: p.approved, conversion: p.conversion }))}
        columns={conversionColumns('Prefix')}
      />
    </>,
  )
}
