/**
 * The benchmark behind `scripts/bench` (see docs/benchmarks.md). Drives
 * POST /api/v1/verify and POST /api/v1/send with wrk, each otpd run on a
 * fresh database seeded the same way, in one of two modes:
 *
 * - default: otpd against a bare Bun.serve baseline, each otpd run paired
 *   with a baseline run of the same endpoint just before it;
 * - --compare REF_BINARY (or --compare-ref GITREF, built from git): a
 *   reference otpd and the new one side by side, in pairs of alternating
 *   order (ref new, new ref, ...) to cancel drift.
 *
 * --fill N then measures the new binary again on a database filled with N
 * verifications through the API. --database postgres instead measures SQLite,
 * PostgreSQL with one node and with --nodes N nodes side by side
 * (scripts/perf/bench-pg.ts). Prints a summary and writes the figures as JSON.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { round1, rssMb, startServer } from './bench-proc.ts'
import { measure, scrapeMetrics, type LoadSettings, type RunResult } from './bench-load.ts'
import {
  coldStart,
  eventsReceived,
  features,
  NUMBER_TEMPLATES,
  startSeeded,
  writeIdPools,
  writeKeyIdPools,
  type Mode,
  type OtpdSettings,
  type Seeded,
} from './bench-otpd.ts'
import { fill, type FillResult } from './bench-fill.ts'
import { benchProviders, printProviderRun } from './bench-provider.ts'
import { buildRef } from './bench-ref.ts'
import { measureNodes, printDatabases, spreadThreads, startPgSeeded, type DatabaseRow, type PgVia } from './bench-pg.ts'
import { meanRun, printBaseline, printCompare, printFill, type Endpoint, type OtpdRun } from './bench-report.ts'
import { benchEvents, printEvents } from './bench-events.ts'

const { values: opt } = parseArgs({
  options: {
    duration: { type: 'string', default: '15' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '64' },
    threads: { type: 'string', default: '2' },
    modes: { type: 'string', default: 'FULL,NORMAL' },
    endpoints: { type: 'string', default: 'verify,send' },
    seed: { type: 'string', default: '3000' },
    pace: { type: 'string', default: '0' },
    'server-cpus': { type: 'string' },
    'client-cpus': { type: 'string' },
    'pg-cpus': { type: 'string' },
    'pg-via': { type: 'string', default: 'tcp' },
    binary: { type: 'string', default: 'dist/otpd' },
    'no-build': { type: 'boolean', default: false },
    'features-off': { type: 'boolean', default: false },
    compare: { type: 'string' },
    'compare-ref': { type: 'string' },
    pairs: { type: 'string', default: '2' },
    'max-others': { type: 'string', default: '0' },
    fill: { type: 'string' },
    database: { type: 'string', default: 'sqlite' },
    nodes: { type: 'string', default: '2' },
    'pool-size': { type: 'string', default: '10' },
    keys: { type: 'string', default: '1' },
    'provider-latency': { type: 'string' },
    'provider-timeout': { type: 'string' },
    'circuit-failures': { type: 'string' },
    'max-sends-in-flight': { type: 'string' },
    'with-verify': { type: 'string' },
    out: { type: 'string', default: 'bench-results.json' },
    // Event delivery to slow endpoints (scripts/perf/bench-events.ts).
    'endpoint-latency': { type: 'string' },
    'event-accounts': { type: 'string', default: '1' },
    'event-rate': { type: 'string', default: '100' },
    help: { type: 'boolean', default: false },
  },
})
if (opt.help) {
  console.log(`usage: scripts/bench [--compare REF_BINARY | --compare-ref GITREF] [--pairs N] [--max-others PCT] [--fill N]
                    [--database postgres [--nodes N] [--pool-size N] [--keys 1,8] [--pg-cpus LIST] [--pg-via tcp|socket]]
                    [--duration S] [--warmup S] [--connections N] [--threads N] [--modes FULL,NORMAL]
                    [--endpoints verify,send] [--seed N] [--pace MS] [--server-cpus LIST --client-cpus LIST]
                    [--features-off] [--binary dist/otpd] [--no-build] [--out bench-results.json]
       scripts/bench --endpoint-latency MS|never [--event-accounts N] [--event-rate R] [--duration S]
       scripts/bench --provider-latency MS[,MS...] [--provider-timeout MS] [--circuit-failures N] [--max-sends-in-flight N]
                     [--with-verify C] --connections N [--duration S] [--warmup S]

Without --compare: otpd (--binary, built first unless --no-build) against a bare Bun.serve baseline.
Every run warms up in --warmup S steps until, in one step, the JIT's compiler threads took under 5 %
of the server's CPU (at most 90 s), then is measured for --duration S.
--compare REF_BINARY: the reference otpd and --binary side by side, per mode and endpoint in N pairs
           of alternating order (ref new, new ref, ...; --pairs, default 2), each run on its own fresh
           database seeded the same way; prints both and the ratio new/ref. Build a reference from git
           outside the tree, e.g.:
             git worktree add --detach ../otpd-ref <commit>
             (cd ../otpd-ref && bun install --frozen-lockfile && bun run build)
             scripts/bench --compare ../otpd-ref/dist/otpd --modes FULL
--compare-ref GITREF: the same, building the reference itself from git into $TMPDIR/otpd-ref-<commit>
           (git archive, bun install --frozen-lockfile, bun run build; reused once built)
--max-others PCT: with --compare, a pair during which other work took more than PCT % of the
           machine's CPU (the others % column) is measured again, at most twice. 0, the default: never
--fill N:  then, per mode, --binary on a fresh database measured, filled with N verifications through
           the API, measured again (verify on ids sampled over the whole fill), and a fresh database
           measured once more; prints filled / empty (the mean of the two empty runs)
--database postgres: per endpoint, --binary on SQLite (the first of --modes), then on PostgreSQL with
           1 node and with --nodes N nodes (default 2), each on a fresh database seeded the same way,
           side by side with ratios to SQLite. PostgreSQL is a throwaway cluster on this machine
           (Debian's initdb/pg_ctl, fsync on); wrk's threads are spread over the nodes' ports;
           --pool-size is each node's [database] pool_size (default 10); --keys K1,K2: the whole
           comparison once per number of API keys on each account (default 1; requests take them
           in turn); --pg-cpus LIST: the PostgreSQL cluster (every process) pinned to these CPUs,
           e.g. --pg-cpus 0 --server-cpus 1 --client-cpus 1: nodes adding capacity or not; --pg-via: the
           nodes reach PostgreSQL over 127.0.0.1 (tcp, the default) or through its unix socket (socket)
--features-off: the fraud guard \`off\` (instead of \`monitor\`) and no webhook endpoint on either account:
           what a feature switched off costs (docs/benchmarks.md#a-feature-that-is-off)
--pace MS: each connection waits MS ms after every answer before its next request, so the load
           stays below saturation. 0, the default: as fast as the server answers
--endpoint-latency MS: event delivery instead: --event-accounts N accounts (default 1), each with a webhook
           endpoint that answers after MS ms (never: not at all), emit --event-rate R events/s each
           (default 100) for --duration S, and another account 10 events/s to an endpoint that answers at
           once; prints events/s delivered, each side's delivery latency p50/p99, the Little's-law bound
           and RSS (docs/benchmarks.md#slow-webhook-endpoints)
--provider-latency MS[,MS...]: sends only, against local gateways (type = "webhook", tried in this order)
           answering after MS each, over --connections N; one --warmup step, then --duration S. Prints
           sends/s, p50, p99, peak RSS, the answers by status and Little's-law bound N / latency of the
           first (docs/benchmarks.md#slow-providers). --provider-timeout MS: every provider's timeout_ms;
           --circuit-failures N, --max-sends-in-flight N: those [delivery] settings (default: otpd's);
           --with-verify C: a verify load of C connections (10 ms between a connection's requests) beside
           the sends, its p50 and p99 printed
--server-cpus LIST, --client-cpus LIST: taskset CPU lists. The servers (all their threads) run on the
           first, wrk and this script on the second. Both or neither. Default: no pinning`)
  process.exit(0)
}

const ROOT = resolve(import.meta.dir, '..', '..')
const binary = resolve(ROOT, opt.binary)
if (opt.compare !== undefined && opt['compare-ref'] !== undefined) {
  console.error('bench: --compare or --compare-ref, not both')
  process.exit(2)
}
let refBinary = opt.compare === undefined ? undefined : resolve(process.cwd(), opt.compare)
const int = (name: string, v: string, min: number) => {
  const n = Number(v)
  if (!Number.isInteger(n) || n < min) {
    console.error(`bench: --${name} takes a whole number (${min} or more), not "${v}"`)
    process.exit(2)
  }
  return n
}
const load: LoadSettings = {
  duration: Number(opt.duration),
  warmup: Number(opt.warmup),
  connections: int('connections', opt.connections, 1),
  threads: int('threads', opt.threads, 1),
  paceMs: int('pace', opt.pace, 0),
  clientCpus: opt['client-cpus'],
  luaDir: join(ROOT, 'scripts', 'perf'),
}
const pairs = int('pairs', opt.pairs, 1)
features.off = opt['features-off']
const maxOthers = int('max-others', opt['max-others'], 0)
const fillN = opt.fill === undefined ? 0 : int('fill', opt.fill, 1)
if ((opt['server-cpus'] === undefined) !== (opt['client-cpus'] === undefined)) {
  console.error('bench: --server-cpus and --client-cpus go together')
  process.exit(2)
}
if (opt['pg-cpus'] !== undefined) {
  if (opt.database !== 'postgres') {
    console.error('bench: --pg-cpus goes with --database postgres')
    process.exit(2)
  }
  // Read by scripts/kit/pg-cluster.ts when it starts the cluster.
  process.env.PG_CPUS = opt['pg-cpus']
}
if (!['tcp', 'socket'].includes(opt['pg-via'])) {
  console.error(`bench: --pg-via takes tcp or socket, not "${opt['pg-via']}"`)
  process.exit(2)
}
if (!['sqlite', 'postgres'].includes(opt.database)) {
  console.error(`bench: --database takes sqlite or postgres, not "${opt.database}"`)
  process.exit(2)
}
const pgNodes = int('nodes', opt.nodes, 1)
const poolSize = int('pool-size', opt['pool-size'], 1)
const keyCounts = opt.keys.split(',').map((k) => int('keys', k.trim(), 1))
if (opt.database === 'postgres' && (refBinary !== undefined || opt['compare-ref'] !== undefined || opt.fill !== undefined)) {
  console.error('bench: --database postgres goes alone (no --compare, --compare-ref or --fill)')
  process.exit(2)
}
const modes = opt.modes.split(',').map((m) => m.trim().toUpperCase()) as Mode[]
const endpoints = opt.endpoints.split(',').map((e) => e.trim()) as Endpoint[]
const scratch = mkdtempSync(join(tmpdir(), 'otpd-bench-'))
const otpd: OtpdSettings = {
  scratch,
  serverCpus: opt['server-cpus'],
  metricsToken: Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('hex'),
  seed: int('seed', opt.seed, 1),
}
const log = (s: string) => process.stderr.write(`bench: ${s}\n`)
const lua = (ep: Endpoint) => `bench-${ep}.lua`
const round3 = (n: number) => Math.round(n * 1000) / 1000

/** Measures one endpoint on a running otpd; its WAL flushes when it reports them. */
const measureOtpd = (ep: Endpoint, s: Seeded) => measure(load, lua(ep), s.server, s.env, () => scrapeMetrics(s.server.url, otpd.metricsToken))

/** Stops the server and removes its database; its peak RSS over the whole run and the errors it logged. */
async function stop(s: Seeded) {
  const hwm = rssMb(s.server.pid, 'VmHWM')
  const errors_logged = s.server.errorLines()
  await s.server.stop()
  rmSync(s.dir, { recursive: true, force: true })
  return { process_peak_rss_mb: hwm === null ? null : round1(hwm), errors_logged }
}

/** One endpoint on a fresh, seeded database of its own. */
async function freshRun(bin: string, mode: Mode, ep: Endpoint, label: string): Promise<OtpdRun> {
  const s = await startSeeded(otpd, bin, mode, label)
  log(`${label} ${mode}: ${ep} (warm-up in ${load.warmup} s steps until the JIT settles + ${load.duration} s)`)
  let r: RunResult
  try {
    r = await measureOtpd(ep, s)
  } catch (e) {
    await stop(s)
    throw e
  }
  return { ...r, ...(await stop(s)) }
}

async function coldStarts(bin: string, runs = 5) {
  const colds: number[] = []
  for (let i = 0; i < runs; i++) colds.push(await coldStart(otpd, bin))
  colds.sort((a, b) => a - b)
  return { median: round1(colds[Math.floor(runs / 2)]!), min: round1(colds[0]!), max: round1(colds[runs - 1]!) }
}

// ---------------------------------------------------------------- default: against a bare Bun.serve

/** Sizes of otpd's answers, for the baseline to answer as much. */
const sample = { uuid: '00000000-0000-4000-8000-000000000000', at: '2026-01-01T00:00:00.000Z' }
const SEND_BYTES = JSON.stringify({ success: true, verification_id: sample.uuid, expires_at: sample.at, request_id: sample.uuid }).length
const VERIFY_BYTES = JSON.stringify({ success: true, verified: false, message: 'Invalid code', request_id: sample.uuid }).length

/**
 * Per mode, one seeded database; each endpoint's otpd run comes right after
 * a baseline run of the same endpoint, and its ratio is to that run: on a
 * shared VM the baseline alone moves by a third between runs minutes apart.
 */
async function againstBaseline() {
  const base = await startServer(
    ['bun', join(ROOT, 'scripts', 'perf', 'bench-baseline.ts')],
    { BENCH_SEND_BYTES: String(SEND_BYTES), BENCH_VERIFY_BYTES: String(VERIFY_BYTES) },
    scratch,
    otpd.serverCpus,
  )
  // Real-looking ids: the baseline parses the same bodies as otpd.
  const ids = Array.from({ length: 100 }, () => crypto.randomUUID())
  const baseEnv = { BENCH_KEY: 'otpd_baseline', ...writeIdPools(scratch, ids, ids) }
  const runs: Record<
    string,
    { baseline: Record<string, RunResult>; results: Record<string, RunResult>; process_peak_rss_mb: number | null; errors_logged: number }
  > = {}
  try {
    for (const mode of modes) {
      log(`${mode}: seeding ${2 * otpd.seed} verifications`)
      const s = await startSeeded(otpd, binary, mode, 'otpd')
      const baseline: Record<string, RunResult> = {}
      const results: Record<string, RunResult> = {}
      try {
        for (const ep of endpoints) {
          log(`baseline: ${ep} (warm-up in ${load.warmup} s steps until the JIT settles + ${load.duration} s), paired with otpd ${mode}`)
          baseline[ep] = await measure(load, lua(ep), base, baseEnv)
          log(`otpd ${mode}: ${ep} (warm-up in ${load.warmup} s steps until the JIT settles + ${load.duration} s)`)
          const r = await measureOtpd(ep, s)
          r.ratio_to_baseline = Math.round((r.rps / baseline[ep]!.rps) * 1000) / 1000
          results[ep] = r
        }
      } finally {
        runs[mode] = { baseline, results, ...(await stop(s)) }
      }
    }
  } finally {
    await base.stop()
  }
  return runs
}

// ---------------------------------------------------------------- --compare: reference and new side by side

async function compare(ref: string) {
  type Side = {
    order: string[]
    ref: OtpdRun[]
    new: OtpdRun[]
    pairs_rerun: number
    ratio_rps?: number
    pair_ratios_rps?: number[]
    median_pair_ratio_rps?: number
  }
  const out: Record<string, Record<string, Side>> = {}
  for (const mode of modes) {
    out[mode] = {}
    for (const ep of endpoints) {
      const e: Side = (out[mode][ep] = { order: [], ref: [], new: [], pairs_rerun: 0 })
      for (let p = 0; p < pairs; p++) {
        const order = p % 2 === 0 ? (['ref', 'new'] as const) : (['new', 'ref'] as const)
        for (let attempt = 1; ; attempt++) {
          const got: Partial<Record<'ref' | 'new', OtpdRun>> = {}
          for (const which of order) got[which] = await freshRun(which === 'ref' ? ref : binary, mode, ep, which)
          const others = Math.max(got.ref!.others_pct ?? 0, got.new!.others_pct ?? 0)
          if (maxOthers > 0 && others > maxOthers && attempt < 3) {
            log(`${ep} ${mode}: other work took ${others} % of the machine during pair ${p + 1}; measuring it again`)
            e.pairs_rerun++
            continue
          }
          e.order.push(...order)
          e.ref.push(got.ref!)
          e.new.push(got.new!)
          break
        }
      }
      e.ratio_rps = round3(meanRun(e.new).rps / meanRun(e.ref).rps)
      e.pair_ratios_rps = e.new.map((x, i) => round3(x.rps / e.ref[i]!.rps))
      const sorted = [...e.pair_ratios_rps].sort((a, b) => a - b)
      e.median_pair_ratio_rps = round3((sorted[Math.floor((sorted.length - 1) / 2)]! + sorted[Math.ceil((sorted.length - 1) / 2)]!) / 2)
    }
  }
  return out
}

// ---------------------------------------------------------------- --fill N

async function filled(n: number) {
  const out: Record<
    string,
    {
      fill: Omit<FillResult, 'ok' | 'wrong'> & { sample_ids: number }
      empty_before: Record<string, OtpdRun>
      filled: Record<string, OtpdRun>
      empty_after: Record<string, OtpdRun>
      ratio_filled_to_empty: Record<string, number>
    }
  > = {}
  for (const mode of modes) {
    const empty_before: Record<string, OtpdRun> = {}
    const empty_after: Record<string, OtpdRun> = {}
    const full: Record<string, RunResult> = {}
    for (const ep of endpoints) empty_before[ep] = await freshRun(binary, mode, ep, 'empty')
    const s = await startSeeded(otpd, binary, mode, 'fill')
    let f: FillResult
    try {
      log(`fill ${mode}: ${n} verifications through the API`)
      const keys = s.env.BENCH_KEYS?.split(',') ?? [s.env.BENCH_KEY!]
      f = await fill(load, s.server, s.dir, keys, n, 2 * otpd.seed, log)
      log(`fill ${mode}: done in ${f.seconds} s; database ${f.db_mb} MB, WAL ${f.wal_mb} MB`)
      const env = { ...s.env, ...fillIdPools(s.dir, f) }
      for (const ep of endpoints) {
        log(`filled ${mode}: ${ep} (warm-up in ${load.warmup} s steps until the JIT settles + ${load.duration} s)`)
        full[ep] = await measure(load, lua(ep), s.server, env, () => scrapeMetrics(s.server.url, otpd.metricsToken))
      }
    } catch (e) {
      await stop(s)
      throw e
    }
    const p = await stop(s)
    for (const ep of endpoints) empty_after[ep] = await freshRun(binary, mode, ep, 'empty')
    const filledRuns = Object.fromEntries(endpoints.map((ep) => [ep, { ...full[ep]!, ...p }]))
    const { ok, wrong, ...fig } = f
    const ratio_filled_to_empty = Object.fromEntries(endpoints.map((ep) => [ep, round3(full[ep]!.rps / meanRun([empty_before[ep]!, empty_after[ep]!]).rps)]))
    out[mode] = { fill: { ...fig, sample_ids: [...ok, ...wrong].flat().length }, empty_before, filled: filledRuns, empty_after, ratio_filled_to_empty }
  }
  return out
}

/**
 * The id pools of verify on the filled database: the fill's sample, per key
 * as the seeded pools are (bench-otpd.ts writeKeyIdPools). A key the fill
 * did not use keeps its seeded pool.
 */
function fillIdPools(dir: string, f: FillResult): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, ok] of f.ok.entries()) {
    if (ok.length > 0 && f.wrong[k]!.length > 0) Object.assign(env, writeKeyIdPools(dir, k, f.ok.length, ok, f.wrong[k]!))
  }
  return env
}

// ---------------------------------------------------------------- --database postgres

/** Per endpoint: SQLite, PostgreSQL 1 node, PostgreSQL N nodes, in that order, each on its own fresh database. */
async function databases() {
  const mode = modes[0]!
  const out: Record<string, DatabaseRow[]> = {}
  for (const keys of keyCounts) {
    for (const ep of endpoints) {
      const s0 = await startSeeded(otpd, binary, mode, 'sqlite', keys)
      let sqlite: OtpdRun
      try {
        log(`sqlite ${mode}, ${keys} key(s): ${ep} (warm-up in ${load.warmup} s steps until the JIT settles + ${load.duration} s)`)
        sqlite = { ...(await measure({ ...load, threads: spreadThreads(load.threads, 1, keys) }, lua(ep), s0.server, s0.env)), ...(await stop(s0)) }
      } catch (e) {
        await stop(s0)
        throw e
      }
      const rows: DatabaseRow[] = [{ ...sqlite, server: `SQLite (${mode})`, keys, ratio_to_sqlite: 1 }]
      for (const n of pgNodes === 1 ? [1] : [1, pgNodes]) {
        const label = `postgres-${n}-node${n > 1 ? 's' : ''}`
        log(`${label}, ${keys} key(s): seeding ${2 * otpd.seed} verifications`)
        const s = await startPgSeeded(otpd, binary, n, label, poolSize, keys, opt['pg-via'] as PgVia)
        try {
          log(`${label}, ${keys} key(s): ${ep} (warm-up in ${load.warmup} s steps until the JIT settles + ${load.duration} s)`)
          const r = await measureNodes(load, lua(ep), s.nodes, s.env, keys)
          rows.push({
            ...r,
            server: `PostgreSQL, ${n} node${n > 1 ? 's' : ''}`,
            keys,
            ratio_to_sqlite: round3(r.rps / sqlite.rps),
            errors_logged: s.nodes.reduce((a, x) => a + x.errorLines(), 0),
          })
        } finally {
          await Promise.all(s.nodes.map((x) => x.stop()))
          rmSync(s.dir, { recursive: true, force: true })
        }
      }
      out[`${ep}`] = [...(out[ep] ?? []), ...rows]
    }
  }
  return out
}

// ---------------------------------------------------------------- main

/** `--endpoint-latency MS`: event delivery to slow endpoints (scripts/perf/bench-events.ts). */
async function endpointLatency(latency: string): Promise<void> {
  const report = await benchEvents(
    {
      binary,
      scratch,
      metricsToken: otpd.metricsToken,
      serverCpus: otpd.serverCpus,
      latencyMs: latency === 'never' ? null : int('endpoint-latency', latency, 0),
      accounts: int('event-accounts', opt['event-accounts'], 1),
      rate: int('event-rate', opt['event-rate'], 1),
      durationS: int('duration', opt.duration, 1),
    },
    log,
  )
  writeFileSync(resolve(process.cwd(), opt.out), JSON.stringify({ date: new Date().toISOString(), events: report }, null, 2) + '\n')
  printEvents(report)
  console.log(`figures written to ${opt.out}`)
}

async function main() {
  if (load.clientCpus !== undefined) {
    // This script drains the servers' output and seeds over HTTP: it is load-side work.
    const t = Bun.spawnSync(['taskset', '-a', '-p', '-c', load.clientCpus, String(process.pid)], { stdout: 'ignore', stderr: 'pipe' })
    if (t.exitCode !== 0) throw new Error(`taskset: ${t.stderr.toString()}`)
  }
  if (!opt['no-build']) {
    log('building dist/otpd')
    const b = Bun.spawnSync(['bun', 'run', 'build'], { cwd: ROOT, stdout: 'ignore', stderr: 'pipe' })
    if (b.exitCode !== 0) throw new Error(`build failed: ${b.stderr.toString()}`)
  }
  if (opt['endpoint-latency'] !== undefined) return endpointLatency(opt['endpoint-latency'])
  if (opt['compare-ref'] !== undefined) refBinary = buildRef(ROOT, opt['compare-ref'], log)
  const mb = (f: string) => round1(statSync(f).size / 1024 / 1024)
  const report: Record<string, unknown> = {
    date: new Date().toISOString(),
    machine: { cpus: navigator.hardwareConcurrency, bun: Bun.version, platform: `${process.platform} ${process.arch}` },
    settings: {
      duration_s: load.duration,
      warmup_s: load.warmup,
      connections: load.connections,
      wrk_threads: load.threads,
      seed_per_pool: otpd.seed,
      pace_ms: load.paceMs,
      server_cpus: otpd.serverCpus ?? null,
      client_cpus: load.clientCpus ?? null,
      binary,
      reference: refBinary ?? null,
      reference_git: opt['compare-ref'] ?? null,
      pairs: refBinary ? pairs : null,
      max_others_pct: refBinary ? maxOthers : null,
      fill: fillN || null,
    },
  }
  if (opt['provider-latency'] !== undefined) {
    const latencies = opt['provider-latency'].split(',').map((m) => int('provider-latency', m.trim(), 0))
    const timeoutMs = opt['provider-timeout'] === undefined ? undefined : int('provider-timeout', opt['provider-timeout'], 100)
    const delivery: Record<string, number> = {}
    if (opt['circuit-failures'] !== undefined) delivery.circuit_failures = int('circuit-failures', opt['circuit-failures'], 1)
    if (opt['max-sends-in-flight'] !== undefined) delivery.max_sends_in_flight = int('max-sends-in-flight', opt['max-sends-in-flight'], 1)
    const run = await benchProviders(
      load,
      binary,
      {
        latencies,
        timeoutMs,
        delivery,
        verifyConnections: opt['with-verify'] === undefined ? 0 : int('with-verify', opt['with-verify'], 1),
        scratch,
        metricsToken: otpd.metricsToken,
        serverCpus: otpd.serverCpus,
      },
      log,
    )
    report.providers = run
    writeFileSync(resolve(process.cwd(), opt.out), JSON.stringify(report, null, 2) + '\n')
    printProviderRun(run, load.connections)
    console.log(`figures written to ${opt.out}`)
    return
  }
  if (opt.database === 'postgres') {
    report.database = { nodes: pgNodes, pool_size: poolSize, keys: keyCounts, sqlite_mode: modes[0], via: opt['pg-via'] }
    report.databases = await databases()
    writeFileSync(resolve(process.cwd(), opt.out), JSON.stringify(report, null, 2) + '\n')
    printDatabases(report.databases as Record<string, DatabaseRow[]>)
    console.log(`figures written to ${opt.out}`)
    return
  }
  log('cold start (5 runs)')
  if (refBinary) {
    report.binary_mb = { ref: mb(refBinary), new: mb(binary) }
    report.cold_start_ms = { ref: await coldStarts(refBinary), new: await coldStarts(binary) }
    report.compare = await compare(refBinary)
  } else {
    report.binary_mb = mb(binary)
    report.cold_start_ms = await coldStarts(binary)
    report.otpd = await againstBaseline()
  }
  if (fillN) report.fill = await filled(fillN)
  writeFileSync(resolve(process.cwd(), opt.out), JSON.stringify(report, null, 2) + '\n')
  const show = { endpoints, paceMs: load.paceMs }
  if (refBinary) printCompare(report as Parameters<typeof printCompare>[0], show)
  else printBaseline(report as Parameters<typeof printBaseline>[0], show)
  if (fillN) printFill(report as Parameters<typeof printFill>[0], show)
  console.log(
    features.off
      ? `load: valid numbers of ${NUMBER_TEMPLATES.length} countries, the fraud guard off, keys of two accounts in turn, no webhook endpoint (--features-off)`
      : `load: valid numbers of ${NUMBER_TEMPLATES.length} countries, the fraud guard in monitor, keys of two accounts in turn, one with a webhook endpoint (${eventsReceived()} events received)`,
  )
  console.log(`figures written to ${opt.out}`)
}

try {
  await main()
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
