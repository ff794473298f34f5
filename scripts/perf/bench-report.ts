/**
 * scripts/bench's printed summary: one table per mode of the bench
 * (against the bare baseline, --compare, --fill), then the ratios a reader
 * checks against the targets.
 */
import type { RunResult } from './bench-load.ts'

export type Endpoint = 'verify' | 'send'
/** A run on a server of its own: its peak RSS over the whole process life and the errors it logged. */
export type OtpdRun = RunResult & { process_peak_rss_mb: number | null; errors_logged: number }

interface Show {
  endpoints: Endpoint[]
  paceMs: number
}

const ms = (us: number) => (us / 1000).toFixed(2)
const statuses = (s: Record<string, number>) =>
  Object.entries(s)
    .map(([k, v]) => `${k}:${v}`)
    .join(' ')
// Server CPU %: the server's CPU time over the run's length (100 = one core busy all the time).
const busy = (x: RunResult) => (x.cpu_us_per_req === null ? '-' : String(Math.round((x.cpu_us_per_req * x.rps) / 1e4)))
const HEAD = [
  'endpoint',
  'server',
  'req/s',
  'p50 ms',
  'p99 ms',
  'ratio',
  'CPU us/req',
  'server CPU %',
  'peak RSS MB',
  'steal %',
  'others %',
  'errors',
  'statuses',
]
const row = (ep: string, server: string, x: RunResult & { errors_logged?: number }, ratio: string) => [
  ep,
  server,
  String(x.rps),
  ms(x.p50_us),
  ms(x.p99_us),
  ratio,
  String(x.cpu_us_per_req ?? '-'),
  busy(x),
  String(x.peak_rss_mb ?? '-'),
  String(x.steal_pct ?? '-'),
  String(x.others_pct ?? '-'),
  String(x.errors_logged ?? '-'),
  statuses(x.statuses),
]

function table(rows: string[][]) {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  for (const r of rows)
    console.log(
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
}

function walLine(label: string, x: RunResult) {
  const w = x.wal_flush
  if (w)
    console.log(
      `${label}: ${w.flushes} WAL flushes, mean ${w.mean_ms} ms, 99 % within ${w.p99_ms_at_most ?? '-'} ms, ${w.at_least_25ms} of 25 ms or more (the disk's part of the tail)`,
    )
  if (x.outbox_depth != null) console.log(`${label}: ${outbox(x)}`)
}

/** The webhook outbox depth at the end of a run: 0 when the dispatcher kept up. */
const outbox = (x: RunResult) => `${x.outbox_depth ?? '-'} webhook deliveries pending at the end of the run`

const ratio = (a: number, b: number) => (b ? a / b : NaN)
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length

/** The mean of several runs of one binary (peak RSS: the highest). */
export function meanRun(runs: OtpdRun[]): OtpdRun {
  const m = (f: (r: OtpdRun) => number | null) => {
    const xs = runs.map(f).filter((x): x is number => x !== null)
    return xs.length ? Math.round(mean(xs) * 10) / 10 : null
  }
  const st: Record<string, number> = {}
  for (const r of runs) for (const [k, v] of Object.entries(r.statuses)) st[k] = (st[k] ?? 0) + v
  return {
    ...runs[0]!,
    requests: runs.reduce((a, r) => a + r.requests, 0),
    rps: Math.round(mean(runs.map((r) => r.rps))),
    p50_us: m((r) => r.p50_us)!,
    p90_us: m((r) => r.p90_us)!,
    p99_us: m((r) => r.p99_us)!,
    max_us: Math.max(...runs.map((r) => r.max_us)),
    cpu_us_per_req: m((r) => r.cpu_us_per_req),
    peak_rss_mb: Math.max(...runs.map((r) => r.peak_rss_mb ?? 0)) || null,
    process_peak_rss_mb: Math.max(...runs.map((r) => r.process_peak_rss_mb ?? 0)) || null,
    steal_pct: m((r) => r.steal_pct),
    others_pct: m((r) => r.others_pct),
    errors_logged: runs.reduce((a, r) => a + r.errors_logged, 0),
    statuses: st,
    wal_flush: undefined,
    outbox_depth: m((r) => r.outbox_depth ?? null),
  }
}

type BaselineRuns = Record<string, { baseline: Record<string, RunResult>; results: Record<string, RunResult>; errors_logged: number }>
type Cold = { median: number }

export function printBaseline(r: { otpd: BaselineRuns; cold_start_ms: Cold; binary_mb: number }, show: Show) {
  const rows = [HEAD.map((h) => (h === 'ratio' ? 'vs baseline' : h))]
  for (const ep of show.endpoints) {
    for (const [mode, run] of Object.entries(r.otpd)) {
      rows.push(row(ep, `baseline (${mode} pair)`, run.baseline[ep]!, '1.000'))
      const x = run.results[ep]!
      rows.push(row(ep, `otpd ${mode}`, { ...x, errors_logged: run.errors_logged }, x.ratio_to_baseline!.toFixed(3)))
    }
  }
  if (show.paceMs > 0) console.log(`paced: each connection waits ${show.paceMs} ms after every answer (below saturation)`)
  table(rows)
  for (const ep of show.endpoints) {
    for (const [mode, run] of Object.entries(r.otpd)) {
      const x = run.results[ep]!
      const b = run.baseline[ep]!
      console.log(
        `${ep} otpd ${mode}: p99 ${ms(x.p99_us)} ms, ${(x.p99_us / b.p99_us).toFixed(1)}x its paired baseline's ${ms(b.p99_us)} ms (the machine's own tail)`,
      )
      walLine(`${ep} otpd ${mode}`, x)
    }
  }
  const full = r.otpd.FULL?.results
  const normal = r.otpd.NORMAL?.results
  if (full && normal) for (const ep of show.endpoints) console.log(`${ep}: NORMAL/FULL throughput = ${(normal[ep]!.rps / full[ep]!.rps).toFixed(2)}x`)
  console.log(`cold start (process start to first 200): ${r.cold_start_ms.median} ms median of 5`)
  console.log(`binary size: ${r.binary_mb} MB`)
}

type CompareRuns = Record<string, Record<string, { order: string[]; ref: OtpdRun[]; new: OtpdRun[]; pairs_rerun: number; median_pair_ratio_rps?: number }>>

export function printCompare(r: { compare: CompareRuns; cold_start_ms: { ref: Cold; new: Cold }; binary_mb: { ref: number; new: number } }, show: Show) {
  const rows = [HEAD.map((h) => (h === 'ratio' ? 'new/ref' : h))]
  const lines: string[] = []
  for (const ep of show.endpoints) {
    for (const [mode, byEp] of Object.entries(r.compare)) {
      const e = byEp[ep]!
      const ref = meanRun(e.ref)
      const nu = meanRun(e.new)
      rows.push(row(ep, `ref ${mode} (mean of ${e.ref.length})`, ref, '1.000'))
      rows.push(row(ep, `new ${mode} (mean of ${e.new.length})`, nu, ratio(nu.rps, ref.rps).toFixed(3)))
      const pairs = e.new.map((x, i) => ratio(x.rps, e.ref[i]!.rps).toFixed(3)).join(', ')
      const cpu = nu.cpu_us_per_req !== null && ref.cpu_us_per_req !== null ? ratio(nu.cpu_us_per_req, ref.cpu_us_per_req).toFixed(2) : '-'
      lines.push(
        `${ep} ${mode}: new/ref req/s ${ratio(nu.rps, ref.rps).toFixed(3)} (pairs: ${pairs}; median ${e.median_pair_ratio_rps?.toFixed(3) ?? '-'}${e.pairs_rerun ? `; ${e.pairs_rerun} pairs measured again` : ''}); CPU/req ${cpu}x; p99 ${ms(nu.p99_us)} vs ${ms(ref.p99_us)} ms; RSS ${nu.process_peak_rss_mb ?? '-'} vs ${ref.process_peak_rss_mb ?? '-'} MB; webhook deliveries pending at the end ${nu.outbox_depth ?? '-'} vs ${ref.outbox_depth ?? '-'}`,
      )
      const pr = e.new.map((x, i) => ratio(x.rps, e.ref[i]!.rps))
      const others = Math.max(...[...e.ref, ...e.new].map((x) => x.others_pct ?? 0))
      if (Math.max(...pr) / Math.min(...pr) > 1.2 || others > 10) {
        lines.push(
          `  noisy: the pairs disagree by ${Math.round((Math.max(...pr) / Math.min(...pr) - 1) * 100)} %, other work took up to ${others} % of the machine; rerun quieter or with more --pairs`,
        )
      }
    }
  }
  if (show.paceMs > 0) console.log(`paced: each connection waits ${show.paceMs} ms after every answer (below saturation)`)
  table(rows)
  for (const l of lines) console.log(l)
  console.log(`cold start (process start to first 200), median of 5: ref ${r.cold_start_ms.ref.median} ms, new ${r.cold_start_ms.new.median} ms`)
  console.log(`binary size: ref ${r.binary_mb.ref} MB, new ${r.binary_mb.new} MB`)
}

type FillRuns = Record<
  string,
  {
    fill: {
      verifications: number
      socket_errors: number
      seconds: number
      sends_per_s: number
      db_mb: number | null
      wal_mb: number | null
      sample_ids: number
    }
    empty_before: Record<string, OtpdRun>
    filled: Record<string, OtpdRun>
    empty_after: Record<string, OtpdRun>
  }
>

export function printFill(r: { fill: FillRuns }, show: Show) {
  const rows = [HEAD.map((h) => (h === 'ratio' ? 'filled/empty' : h))]
  const lines: string[] = []
  for (const [mode, f] of Object.entries(r.fill)) {
    lines.push(
      `fill ${mode}: ${f.fill.verifications} verifications (${f.fill.socket_errors} socket errors) in ${f.fill.seconds} s (${f.fill.sends_per_s}/s); database ${f.fill.db_mb ?? '-'} MB, WAL ${f.fill.wal_mb ?? '-'} MB; verify drew on ${f.fill.sample_ids} ids sampled over the fill`,
    )
    for (const ep of show.endpoints) {
      const empty = meanRun([f.empty_before[ep]!, f.empty_after[ep]!])
      const x = f.filled[ep]!
      rows.push(row(ep, `empty ${mode} (before)`, f.empty_before[ep]!, '-'))
      rows.push(row(ep, `filled ${mode}`, x, ratio(x.rps, empty.rps).toFixed(3)))
      rows.push(row(ep, `empty ${mode} (after)`, f.empty_after[ep]!, '-'))
      lines.push(
        `${ep} ${mode}: filled/empty req/s ${ratio(x.rps, empty.rps).toFixed(3)} (empty: mean of the runs before and after the fill, ${empty.rps} req/s)`,
      )
      if (x.outbox_depth != null) lines.push(`${ep} filled ${mode}: ${outbox(x)}`)
    }
  }
  table(rows)
  for (const l of lines) console.log(l)
}
