/**
 * Overview: are codes arriving and converting? Sends, delivered, verified and
 * conversion, by channel and by country; sends and approvals over time (uPlot,
 * with the same numbers as a table for a screen reader); delivery success by
 * provider with the failover share; credits spent against balance and cap.
 */
import { type PageFrame, page } from '../layout.tsx'
import { Figures, fmt, pct, Ratio, Table } from '../widgets.tsx'

export interface Funnel {
  sends: number
  delivered: number
  verified: number
  /** verified / sends; null with no send. */
  conversion: number | null
}

export interface OverviewView {
  totals: Funnel
  byChannel: (Funnel & { channel: string })[]
  byCountry: (Funnel & { country: string })[]
  /** Bucket starts (ms) and the counts in each. */
  series: { t: number[]; sends: number[]; approvals: number[] }
  providers: { provider: string; attempts: number; delivered: number; success: number | null; failoverShare: number | null }[]
  credits: { spent: number; balance: number; dailyCap: number | null }
}

function funnelColumns<T extends Funnel>(first: { label: string; cell: (r: T) => string }) {
  return [
    first,
    { label: 'Sends', num: true, cell: (r: T) => fmt(r.sends) },
    { label: 'Delivered', num: true, cell: (r: T) => fmt(r.delivered) },
    { label: 'Verified', num: true, cell: (r: T) => fmt(r.verified) },
    { label: 'Conversion', num: true, cell: (r: T) => <Ratio value={r.conversion} /> },
  ]
}

export function overviewPage(frame: PageFrame, v: OverviewView): string {
  const chart = { labels: ['Sends', 'Approvals'], t: v.series.t.map((ms) => Math.floor(ms / 1000)), series: [v.series.sends, v.series.approvals] }
  const points = v.series.t.map((t, i) => ({ t, sends: v.series.sends[i] ?? 0, approvals: v.series.approvals[i] ?? 0 }))
  return page(
    frame,
    <>
      <Figures
        label="Totals in this period"
        items={[
          { id: 'sends', label: 'Sends', value: fmt(v.totals.sends) },
          { id: 'delivered', label: 'Delivered', value: fmt(v.totals.delivered) },
          { id: 'verified', label: 'Verified', value: fmt(v.totals.verified) },
          { id: 'conversion', label: 'Conversion', value: pct(v.totals.conversion) },
          { id: 'spent', label: 'Credits spent', value: fmt(v.credits.spent) },
          { id: 'balance', label: 'Balance', value: fmt(v.credits.balance) },
          { id: 'cap', label: 'Daily cap', value: v.credits.dailyCap === null ? 'none' : fmt(v.credits.dailyCap) },
        ]}
      />
      <section class="panel" aria-labelledby="series-title">
        <h2 id="series-title">Sends and approvals over time</h2>
        <div
          class="chart"
          role="img"
          aria-label="Chart of sends and approvals over time; the same numbers are in the table below"
          data-chart={JSON.stringify(chart)}
        />
        <details>
          <summary>The chart's numbers</summary>
          <Table
            caption="Sends and approvals per interval"
            rows={points}
            columns={[
              { label: 'From (UTC)', cell: (p) => new Date(p.t).toISOString().slice(0, 16).replace('T', ' ') },
              { label: 'Sends', num: true, cell: (p) => fmt(p.sends) },
              { label: 'Approvals', num: true, cell: (p) => fmt(p.approvals) },
            ]}
          />
        </details>
      </section>
      <div class="grid2">
        <Table
          caption="By channel"
          id="by-channel"
          rows={v.byChannel}
          columns={funnelColumns<Funnel & { channel: string }>({ label: 'Channel', cell: (r) => r.channel })}
        />
        <Table
          caption="Delivery by provider"
          id="by-provider"
          rows={v.providers}
          columns={[
            { label: 'Provider', cell: (p) => p.provider },
            { label: 'Attempts', num: true, cell: (p) => fmt(p.attempts) },
            { label: 'Delivered', num: true, cell: (p) => fmt(p.delivered) },
            { label: 'Success', num: true, cell: (p) => <Ratio value={p.success} /> },
            { label: 'Failover share', num: true, cell: (p) => pct(p.failoverShare) },
          ]}
        />
      </div>
      <Table
        caption="By country"
        id="by-country"
        rows={v.byCountry}
        columns={funnelColumns<Funnel & { country: string }>({ label: 'Country', cell: (r) => r.country })}
      />
    </>,
  )
}
