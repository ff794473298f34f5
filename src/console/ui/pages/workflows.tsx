/** @jsxImportSource hono/jsx */
/**
 * Workflows: of the sends made with a workflow (several channels for one
 * code), which step converted, by country and by channel, and the share of
 * approvals a step after the first saved (otp/console-workflows.ts,
 * docs/console.md#workflows). Steps are shown from 1, as a person counts.
 */
import type { ChannelCounts, WorkflowCounts, WorkflowsPage } from '../../../otp/console-workflows.ts'
import { MAX_WORKFLOW_STEPS } from '../../../otp/types.ts'
import { type PageFrame, page } from '../layout.tsx'
import { Country, CountryNote, Figures, fmt, pct, Ratio, Table } from '../widgets.tsx'

/** The definition the page states, word for word as docs/console.md#workflows gives it. */
export const FALLBACK_SAVED_MEANS =
  'Fallback saved: of the workflow sends of this period that were approved, the share approved while a later step (2 or 3) was current: sign-ins the first channel did not bring in. Test recipients are left out.'

const STEPS = Array.from({ length: MAX_WORKFLOW_STEPS }, (_, i) => i)

type ByCountry = { key: string; counts: WorkflowCounts }

const stepColumns = <T,>(of: (r: T) => number[]) => STEPS.map((i) => ({ label: `Approved at step ${i + 1}`, num: true, cell: (r: T) => fmt(of(r)[i] ?? 0) }))

function countryColumns() {
  return [
    { label: 'Country', cell: (r: ByCountry) => <Country code={r.key} none="none (email first)" /> },
    { label: 'Started', num: true, cell: (r: ByCountry) => fmt(r.counts.started) },
    ...stepColumns((r: ByCountry) => r.counts.approvedByStep),
    { label: 'Approved', num: true, cell: (r: ByCountry) => fmt(r.counts.approved) },
    { label: 'Fallback saved', num: true, cell: (r: ByCountry) => <Ratio value={r.counts.fallbackSaved} /> },
  ]
}

function channelColumns() {
  return [
    { label: 'Channel', cell: (r: ChannelCounts) => r.channel },
    { label: 'Steps started', num: true, cell: (r: ChannelCounts) => fmt(r.stepsStarted) },
    ...stepColumns((r: ChannelCounts) => r.approvedByStep),
    { label: 'Approved', num: true, cell: (r: ChannelCounts) => fmt(r.approved) },
  ]
}

export function workflowsPage(frame: PageFrame, w: WorkflowsPage): string {
  const t = w.totals
  if (t.started === 0) {
    return page(
      frame,
      <p id="workflows-empty">
        No workflow was sent in this period: sends with a <code>workflow</code> or <code>"channel": "auto"</code> (several channels for one code) are counted
        here.
      </p>,
    )
  }
  return page(
    frame,
    <>
      <p class="hint" id="fallback-saved-means">
        {FALLBACK_SAVED_MEANS}
      </p>
      <Figures
        label="Workflow sends in this period"
        items={[
          { id: 'started', label: 'Workflow sends', value: fmt(t.started) },
          { id: 'approved', label: 'Approved', value: fmt(t.approved) },
          ...STEPS.map((i) => ({ id: `step-${i + 1}`, label: `Approved at step ${i + 1}`, value: fmt(t.approvedByStep[i] ?? 0) })),
          { id: 'fallback-saved', label: 'Fallback saved', value: t.fallbackSaved === null ? 'no approval yet' : pct(t.fallbackSaved) },
        ]}
      />
      <Table caption="By country" id="wf-country" rows={w.byCountry} columns={countryColumns()} />
      <CountryNote />
      <Table caption="By channel" id="wf-channel" rows={w.byChannel} columns={channelColumns()} />
      <p class="hint">
        Steps started: the steps of this channel that started, at any place in their workflow. Approved at step N: approvals while this channel's step was the
        workflow's N-th and the last one started.
      </p>
    </>,
  )
}
