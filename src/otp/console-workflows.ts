/**
 * The console's workflows page (docs/console.md#workflows): of the workflow
 * sends made in a period, which step converted, by country and by channel,
 * and the share of approved ones that a step after the first saved. Read
 * from the verifications and their steps (one aggregate per engine), not
 * from the rollups: the rollups count a send once, not its steps.
 */
import type { Clock } from '../lib/clock.ts'
import { periodRange, pickAccount, type Period, type PeriodRange } from './console-stats.ts'
import type { StatsReads, Storage, WorkflowStepRow } from './ports/index.ts'
import { MAX_WORKFLOW_STEPS } from './types.ts'

export interface WorkflowCounts {
  /** Workflow sends (each one's first step started with it). */
  started: number
  /** Approved ones, by the index of the step current at approval (0: the first). */
  approvedByStep: number[]
  approved: number
  /** Of the approved ones, the share approved at a step after the first; null without an approval. */
  fallbackSaved: number | null
}

export interface ChannelCounts {
  channel: string
  /** Steps of this channel that started, at any index. */
  stepsStarted: number
  /** Approvals while a step of this channel was current, by that step's index. */
  approvedByStep: number[]
  approved: number
}

export interface WorkflowsPage {
  account: string | null
  range: PeriodRange
  totals: WorkflowCounts
  /** By the verification's stored country (`''`: none, an email first step), most sends first. */
  byCountry: { key: string; counts: WorkflowCounts }[]
  /** By the channel of the step current at approval, most started steps first. */
  byChannel: ChannelCounts[]
}

export interface ConsoleWorkflowsDeps {
  storage: Storage
  clock: Clock
  /** The aggregate read made elsewhere (store/engine.ts consoleReads: a thread of its own on SQLite); else in the storage's read. */
  steps?: StatsReads['workflowSteps'] | null
}

const steps = (): number[] => Array.from({ length: MAX_WORKFLOW_STEPS }, () => 0)

function emptyCounts(): WorkflowCounts {
  return { started: 0, approvedByStep: steps(), approved: 0, fallbackSaved: null }
}

function addRow(c: { approvedByStep: number[]; approved: number }, r: WorkflowStepRow): void {
  c.approvedByStep[r.step] = (c.approvedByStep[r.step] ?? 0) + r.approved
  c.approved += r.approved
}

/** The share a later step saved: approvals at index 1 or more over all approvals. */
function withSaved(c: WorkflowCounts): WorkflowCounts {
  const later = c.approved - (c.approvedByStep[0] ?? 0)
  return { ...c, fallbackSaved: c.approved === 0 ? null : later / c.approved }
}

const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** The page's figures from the store's rows (pure). */
export function workflowFigures(rows: WorkflowStepRow[]): Pick<WorkflowsPage, 'totals' | 'byCountry' | 'byChannel'> {
  const totals = emptyCounts()
  const countries = new Map<string, WorkflowCounts>()
  const channels = new Map<string, ChannelCounts>()
  for (const r of rows) {
    let country = countries.get(r.country)
    if (!country) countries.set(r.country, (country = emptyCounts()))
    let channel = channels.get(r.channel)
    if (!channel) channels.set(r.channel, (channel = { channel: r.channel, stepsStarted: 0, approvedByStep: steps(), approved: 0 }))
    // Every workflow's first step starts with its send: those count the sends.
    if (r.step === 0) {
      totals.started += r.started
      country.started += r.started
    }
    channel.stepsStarted += r.started
    addRow(totals, r)
    addRow(country, r)
    addRow(channel, r)
  }
  return {
    totals: withSaved(totals),
    byCountry: [...countries].map(([key, c]) => ({ key, counts: withSaved(c) })).sort((a, b) => b.counts.started - a.counts.started || byKey(a.key, b.key)),
    byChannel: [...channels.values()].sort((a, b) => b.stepsStarted - a.stepsStarted || byKey(a.channel, b.channel)),
  }
}

export class ConsoleWorkflows {
  constructor(private readonly d: ConsoleWorkflowsDeps) {}

  page(period: Period, accountName?: string): Promise<{ ok: true; value: WorkflowsPage } | { ok: false; error: string }> {
    const range = periodRange(period, this.d.clock.now())
    const steps = this.d.steps
    if (!steps) {
      return this.d.storage.read(async (r) => {
        const pick = await pickAccount(r, accountName)
        if (!pick.ok) return pick
        const rows = await r.stats.workflowSteps(range.from, range.to, pick.account?.id ?? null)
        return { ok: true as const, value: { account: pick.account?.name ?? null, range, ...workflowFigures(rows) } }
      })
    }
    return this.elsewhere(steps, range, accountName)
  }

  /** The account looked up here (one indexed row), the aggregate read by `steps`. */
  private async elsewhere(
    steps: StatsReads['workflowSteps'],
    range: PeriodRange,
    accountName?: string,
  ): Promise<{ ok: true; value: WorkflowsPage } | { ok: false; error: string }> {
    const pick = await this.d.storage.read((r) => pickAccount(r, accountName))
    if (!pick.ok) return pick
    const rows = await steps(range.from, range.to, pick.account?.id ?? null)
    return { ok: true, value: { account: pick.account?.name ?? null, range, ...workflowFigures(rows) } }
  }
}
