/** @jsxImportSource hono/jsx */
/**
 * Overview: are codes arriving and converting? Sends, accepted, delivered,
 * verified and conversion, by channel and by country; sends and approvals
 * over time (uPlot, with the same numbers as a table for a screen reader);
 * delivery by provider with the failover share; credits spent against the
 * balance and the daily cap. The figures are the rollups' (otp/console-stats.ts).
 */
import type { Counts, Overview } from '../../../otp/console-stats.ts'
import { type PageFrame, page } from '../layout.tsx'
import { Figures, fmt, pct, Ratio, Table, Time } from '../widgets.tsx'

type Grouped = { key: string; counts: Counts }

const funnelColumns = (label: string) => [
  { label, cell: (r: Grouped) => r.key || 'unknown' },
  { label: 'Sends', num: true, cell: (r: Grouped) => fmt(r.counts.sends) },
  { label: 'Accepted', num: true, cell: (r: Grouped) => fmt(r.counts.accepted) },
  { label: 'Delivered', num: true, cell: (r: Grouped) => fmt(r.counts.delivered) },
  { label: 'Verified', num: true, cell: (r: Grouped) => fmt(r.counts.approved) },
  { label: 'Conversion', num: true, cell: (r: Grouped) => <Conversion counts={r.counts} /> },
]

/**
 * Approvals over the sends otpd checks; a hook's sends are checked by their
 * identity server (docs/integrations.md#what-otpd-records), so sends that are
 * all a hook's say so instead of a rate.
 */
function Conversion(props: { counts: Counts }) {
  const c = props.counts
  if (c.sends > 0 && c.sends === c.checked) return <span class="muted">checked by the identity server</span>
  return <Ratio value={c.sends - c.checked <= 0 ? null : c.conversion} />
}

function conversionText(c: Counts): string {
  if (c.sends > 0 && c.sends === c.checked) return 'checked by the identity server'
  return c.sends - c.checked <= 0 ? '–' : pct(c.conversion)
}

export function overviewPage(frame: PageFrame, o: Overview): string {
  const chart = {
    labels: ['Sends', 'Approvals'],
    t: o.series.map((b) => Math.floor(b.at / 1000)),
    series: [o.series.map((b) => b.sends), o.series.map((b) => b.approved)],
  }
  const t = o.totals
  return page(
    frame,
    <>
      <p class="hint">
        {o.asOf === null ? (
          'The figures have not been counted yet.'
        ) : (
          <>
            Counted up to <Time at={o.asOf} />.
          </>
        )}
      </p>
      <Figures
        label="Totals in this period"
        items={[
          { id: 'sends', label: 'Sends', value: fmt(t.sends) },
          { id: 'accepted', label: 'Accepted by a provider', value: fmt(t.accepted) },
          { id: 'delivered', label: 'Delivered (receipts)', value: fmt(t.delivered) },
          { id: 'verified', label: 'Verified', value: fmt(t.approved) },
          { id: 'conversion', label: 'Conversion', value: conversionText(t) },
          ...(t.checked > 0 ? [{ id: 'checked', label: "Checked by identity servers (hooks')", value: fmt(t.checked) }] : []),
          { id: 'failover', label: 'Failover share', value: pct(o.failoverShare) },
          { id: 'spent', label: 'Credits spent', value: fmt(o.credits.spent) },
          { id: 'balance', label: 'Balance', value: fmt(o.credits.balance) },
          {
            id: 'cap',
            label: 'Daily cap (spent in 24 h)',
            value: o.credits.dailyCap === null ? `none (${fmt(o.credits.spent24h)})` : `${fmt(o.credits.spent24h)} of ${fmt(o.credits.dailyCap)}`,
          },
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
            rows={o.series}
            columns={[
              { label: 'From', cell: (b) => <Time at={b.at} /> },
              { label: 'Sends', num: true, cell: (b) => fmt(b.sends) },
              { label: 'Approvals', num: true, cell: (b) => fmt(b.approved) },
            ]}
          />
        </details>
      </section>
      <Table caption="By channel" id="by-channel" rows={o.byChannel} columns={funnelColumns('Channel')} />
      <Table
        caption="Delivery by provider"
        id="by-provider"
        rows={o.providers}
        empty="No provider took a send in this period."
        columns={[
          { label: 'Provider', cell: (p) => p.provider },
          { label: 'Channel', cell: (p) => p.channel },
          { label: 'Accepted', num: true, cell: (p) => fmt(p.accepted) },
          { label: 'Delivered', num: true, cell: (p) => fmt(p.delivered) },
          { label: 'Undelivered', num: true, cell: (p) => fmt(p.undelivered) },
          { label: 'Delivery rate', num: true, cell: (p) => <Ratio value={p.accepted === 0 ? null : p.deliveryRate} /> },
          { label: 'Role', cell: (p) => (p.failover ? 'failover' : 'first') },
        ]}
      />
      <Table caption="By country" id="by-country" rows={o.byCountry} columns={funnelColumns('Country')} />
    </>,
  )
}
