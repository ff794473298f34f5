/**
 * The benchmark behind `scripts/bench` (see BENCHMARKS.md). Builds dist/otpd,
 * measures cold start, then drives POST /api/v1/verify and POST /api/v1/send
 * with wrk against a bare Bun.serve baseline and against otpd with
 * synchronous = FULL and NORMAL, each on a fresh database with a noop
 * provider and limits raised. Every otpd run is paired with a baseline run of
 * the same endpoint just before it, and its ratio is to that run. Prints a
 * summary (with the hypervisor's CPU steal during each run) and writes the
 * figures as JSON.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { flushFigures, parseFlushes, type FlushHistogram, type WalFlushFigures } from './lib/flush-figures.ts'

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
    binary: { type: 'string', default: 'dist/otpd' },
    'no-build': { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench-results.json' },
    help: { type: 'boolean', default: false },
  },
})
if (opt.help) {
  console.log(`usage: scripts/bench [--duration S] [--warmup S] [--connections N] [--threads N] [--modes FULL,NORMAL]
                    [--endpoints verify,send] [--seed N] [--pace MS] [--server-cpus LIST --client-cpus LIST]
                    [--binary dist/otpd] [--no-build] [--out bench-results.json]

--pace MS: each connection waits MS ms after every answer before its next request, so the
           load stays below saturation (the connections still arrive in step: BENCHMARKS.md,
           eighth round). 0, the default: as fast as the server answers, as the targets are set
--server-cpus LIST, --client-cpus LIST: taskset CPU lists. The servers (otpd and the baseline, all
           their threads) run on the first, wrk and this script on the second, so the load
           generator does not share the server's cores (BENCHMARKS.md, twelfth round). Both or neither.
           Default: no pinning, everything shares every core, as the targets are set`)
  process.exit(0)
}

const ROOT = resolve(import.meta.dir, '..')
const LUA_DIR = join(ROOT, 'scripts')
const binary = resolve(ROOT, opt.binary)
const duration = Number(opt.duration)
const warmup = Number(opt.warmup)
const connections = Number(opt.connections)
const threads = Number(opt.threads)
const paceMs = Number(opt.pace)
if (!Number.isInteger(paceMs) || paceMs < 0) {
  console.error(`bench: --pace takes a whole number of milliseconds (0 or more), not "${opt.pace}"`)
  process.exit(2)
}
const serverCpus = opt['server-cpus']
const clientCpus = opt['client-cpus']
if ((serverCpus === undefined) !== (clientCpus === undefined)) {
  console.error('bench: --server-cpus and --client-cpus go together')
  process.exit(2)
}
/** The command, on the given CPUs when pinning. */
const pinned = (cpus: string | undefined, cmd: string[]) => (cpus === undefined ? cmd : ['taskset', '-c', cpus, ...cmd])
const modes = opt.modes.split(',').map((m) => m.trim().toUpperCase()) as ('FULL' | 'NORMAL')[]
const endpoints = opt.endpoints.split(',').map((e) => e.trim()) as ('verify' | 'send')[]
const scratch = mkdtempSync(join(tmpdir(), 'otpd-bench-'))
const log = (s: string) => process.stderr.write(`bench: ${s}\n`)

interface WrkFigures {
  requests: number
  duration_us: number
  p50_us: number
  p90_us: number
  p99_us: number
  max_us: number
  socket_errors: number
  statuses: Record<string, number>
}
interface RunResult extends WrkFigures {
  rps: number
  /** Server CPU time (user + system, all threads) per request: steadier than req/s on a shared machine. */
  cpu_us_per_req: number | null
  peak_rss_mb: number | null
  /** Share of the machine's CPU time the hypervisor gave to others during the run (/proc/stat steal): how noisy the run was. */
  steal_pct: number | null
  ratio_to_baseline?: number
  /** otpd under FULL: the WAL flushes made during the measured run, from its /metrics (otpd_wal_flush_seconds). */
  wal_flush?: WalFlushFigures | null
}

// ---------------------------------------------------------------- processes

interface Proc {
  url: string
  pid: number
  output: () => string
  /** Log lines at level error, whole run (start-up output and stderr included). */
  errorLines: () => number
  stop(): Promise<void>
}

const ERROR_MARK = Buffer.from('"level":"error"')

async function start(cmd: string[], env: Record<string, string>, cwd: string): Promise<Proc> {
  const proc = Bun.spawn(pinned(serverCpus, cmd), { cwd, env: { ...cleanEnv(), ...env }, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  let out = ''
  let errorLines = 0
  const reader = proc.stdout.getReader()
  const decoder = new TextDecoder()
  let url = ''
  const deadline = Date.now() + 15_000
  while (!url) {
    if (Date.now() > deadline) throw new Error(`${cmd[0]} did not start:\n${out}`)
    const { value, done } = await reader.read()
    if (done) throw new Error(`${cmd.join(' ')} exited:\n${out}${await new Response(proc.stderr).text()}`)
    out += decoder.decode(value)
    url = /listening on (http:\/\/[0-9.]+:[0-9]+)/.exec(out)?.[1] ?? ''
  }
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      // Past the start-up lines the request log is drained, not decoded: this
      // process shares the cores with the server it measures. Error lines are
      // counted on the raw bytes of what is not kept (a mark split across two
      // reads would be missed, never invented).
      if (out.length < 64_000) {
        out += decoder.decode(value)
        continue
      }
      const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
      for (let i = bytes.indexOf(ERROR_MARK); i >= 0; i = bytes.indexOf(ERROR_MARK, i + 1)) errorLines++
    }
  })()
  void new Response(proc.stderr).text().then((t) => (out += t))
  return {
    url,
    pid: proc.pid,
    output: () => out,
    errorLines: () => errorLines + (out.match(/"level":"error"/g) ?? []).length,
    stop: async () => {
      proc.kill('SIGTERM')
      await proc.exited
    },
  }
}

/** No inherited OTPD_* settings: the bench config is the whole configuration. */
function cleanEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter(([k, v]) => !k.startsWith('OTPD_') && v !== undefined)) as Record<string, string>
}

function rssMb(pid: number, field: 'VmRSS' | 'VmHWM'): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) / 1024 : null
  } catch {
    return null
  }
}

/** CPU time (user + system) the process has used so far, in microseconds. */
function cpuUs(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    // utime and stime are fields 14 and 15 of stat, counted from the state field (3).
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS
  } catch {
    return null
  }
}
/** The machine's CPU time so far, and the part of it stolen by the hypervisor (clock ticks, all CPUs). */
function machineTicks(): { total: number; steal: number } | null {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    return { total: f.slice(0, 8).reduce((a, b) => a + b, 0), steal: f[7] ?? 0 }
  } catch {
    return null
  }
}
const CLOCK_TICKS = Number(Bun.spawnSync(['getconf', 'CLK_TCK']).stdout.toString().trim()) || 100

function otpd(args: string[], configFile: string, cwd: string): string {
  const p = Bun.spawnSync([binary, ...args, '--config', configFile], { cwd, env: cleanEnv() })
  if (p.exitCode !== 0) throw new Error(`otpd ${args.join(' ')}: ${p.stderr.toString()}`)
  return p.stdout.toString()
}

// ---------------------------------------------------------------- wrk

async function wrk(lua: string, url: string, seconds: number, env: Record<string, string>): Promise<WrkFigures> {
  const p = Bun.spawn(pinned(clientCpus, ['wrk', `-t${threads}`, `-c${connections}`, `-d${seconds}s`, '--timeout', '5s', '-s', join(LUA_DIR, lua), url]), {
    env: { ...cleanEnv(), BENCH_LUA_DIR: LUA_DIR, BENCH_PACE_MS: String(paceMs), ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  const line = /^BENCH_JSON (.*)$/m.exec(stdout)?.[1]
  if (code !== 0 || !line) throw new Error(`wrk failed (${code}):\n${stdout}\n${stderr}`)
  return JSON.parse(line) as WrkFigures
}

/**
 * Warm-up, then the measured run, sampling the server's RSS every 100 ms;
 * with `flushes`, the server's WAL flush histogram is read before and after
 * the measured run.
 */
async function measure(lua: string, target: Proc, env: Record<string, string>, flushes?: () => Promise<FlushHistogram | null>): Promise<RunResult> {
  if (warmup > 0) await wrk(lua, target.url, warmup, { ...env, BENCH_RUN: '1' })
  const h0 = await flushes?.()
  let peak = 0
  const timer = setInterval(() => (peak = Math.max(peak, rssMb(target.pid, 'VmRSS') ?? 0)), 100)
  const cpu0 = cpuUs(target.pid)
  const m0 = machineTicks()
  const f = await wrk(lua, target.url, duration, { ...env, BENCH_RUN: '2' })
  const cpu1 = cpuUs(target.pid)
  const m1 = machineTicks()
  clearInterval(timer)
  const cpu = cpu0 === null || cpu1 === null ? null : round1((cpu1 - cpu0) / f.requests)
  const steal = m0 === null || m1 === null || m1.total === m0.total ? null : round1(((m1.steal - m0.steal) * 100) / (m1.total - m0.total))
  const h1 = await flushes?.()
  const result: RunResult = { ...f, rps: Math.round(f.requests / (f.duration_us / 1e6)), cpu_us_per_req: cpu, peak_rss_mb: peak ? round1(peak) : null, steal_pct: steal }
  if (flushes) result.wal_flush = h0 && h1 ? flushFigures(h0, h1) : null
  return result
}

const METRICS_TOKEN = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('hex')

async function scrapeFlushes(url: string): Promise<FlushHistogram | null> {
  return parseFlushes(await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text())
}

const round1 = (n: number) => Math.round(n * 10) / 10

// ---------------------------------------------------------------- otpd setup

function benchConfig(dir: string, synchronous: string): string {
  const file = join(dir, 'otp.config.toml')
  const big = 1_000_000_000
  writeFileSync(
    file,
    `[server]
metrics_token = "${METRICS_TOKEN}"

[database]
path = "${join(dir, 'otpd.db')}"
synchronous = "${synchronous}"

[limits]
key_requests_per_minute = ${big}
recipient_per_minute = ${big}
recipient_per_hour = ${big}
recipient_per_day = ${big}
max_failed_attempts = ${big}
recipient_failures_per_day = ${big}

[channels]
sms = ["bench"]
email = ["bench"]
voice = ["bench"]

[providers.bench]
type = "noop"
`,
  )
  return file
}

/** A key and a billion credits, written by the CLI before the server starts. */
function seedAccount(dir: string, configFile: string): string {
  const key = JSON.parse(otpd(['keys', 'create', '--name', 'bench', '--json'], configFile, dir)).key as string
  otpd(['credits', 'add', '1000000000'], configFile, dir)
  return key
}

/** Verifications with the code 123456 (custom code), to real recipients, through the API. */
async function seedVerifications(url: string, key: string, n: number, tag: number): Promise<string[]> {
  const ids: string[] = []
  let next = 0
  const worker = async () => {
    while (next < n) {
      const i = next++
      const r = await fetch(`${url}/api/v1/send`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ channel: 'sms', recipient: `+1${tag}8${String(i).padStart(9, '0')}`, code: '123456', expires_in: 3600 }),
      })
      const j = (await r.json()) as { verification_id?: string }
      if (r.status !== 200 || !j.verification_id) throw new Error(`seed send answered ${r.status}: ${JSON.stringify(j)}`)
      ids.push(j.verification_id)
    }
  }
  await Promise.all(Array.from({ length: 32 }, worker))
  return ids
}

/**
 * One mode on its own fresh database. Each endpoint's otpd run comes right
 * after a baseline run of the same endpoint, and its ratio is to that run:
 * on a shared VM the baseline alone moved by a third between runs minutes
 * apart (BENCHMARKS.md), so a pair measured back to back is the fair one.
 */
async function benchMode(mode: 'FULL' | 'NORMAL', baselineRun: (ep: 'verify' | 'send') => Promise<RunResult>) {
  const dir = mkdtempSync(join(scratch, `otpd-${mode.toLowerCase()}-`))
  const configFile = benchConfig(dir, mode)
  const key = seedAccount(dir, configFile)
  const server = await start([binary, 'serve', '--listen', '127.0.0.1:0', '--config', configFile], {}, dir)
  try {
    const results: Record<string, RunResult> = {}
    const baseline: Record<string, RunResult> = {}
    const env: Record<string, string> = { BENCH_KEY: key }
    if (endpoints.includes('verify')) {
      log(`${mode}: seeding ${2 * Number(opt.seed)} verifications`)
      const ok = await seedVerifications(server.url, key, Number(opt.seed), 1)
      const wrong = await seedVerifications(server.url, key, Number(opt.seed), 2)
      env.BENCH_IDS_OK = join(dir, 'ids-ok.txt')
      env.BENCH_IDS_WRONG = join(dir, 'ids-wrong.txt')
      writeFileSync(env.BENCH_IDS_OK, ok.join('\n') + '\n')
      writeFileSync(env.BENCH_IDS_WRONG, wrong.join('\n') + '\n')
    }
    for (const ep of endpoints) {
      baseline[ep] = await baselineRun(ep)
      log(`${mode}: ${ep} (${warmup} s warm-up + ${duration} s)`)
      const r = await measure(`bench-${ep}.lua`, server, env, () => scrapeFlushes(server.url))
      r.ratio_to_baseline = Math.round((r.rps / baseline[ep]!.rps) * 1000) / 1000
      results[ep] = r
    }
    const hwm = rssMb(server.pid, 'VmHWM')
    return { baseline, results, process_peak_rss_mb: hwm === null ? null : round1(hwm), errors_logged: server.errorLines() }
  } finally {
    await server.stop()
  }
}

// ---------------------------------------------------------------- cold start

async function freePort(): Promise<number> {
  const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = s.port
  s.stop(true)
  return port
}

/** Process start to the first 200 (a send to a test recipient), on an existing database. */
async function coldStart(): Promise<number> {
  const dir = mkdtempSync(join(scratch, 'otpd-cold-'))
  const configFile = benchConfig(dir, 'FULL')
  const key = JSON.parse(otpd(['keys', 'create', '--json'], configFile, dir)).key as string
  const port = await freePort()
  const body = JSON.stringify({ channel: 'sms', recipient: '+15550100001' })
  const t0 = performance.now()
  const proc = Bun.spawn(pinned(serverCpus, [binary, 'serve', '--listen', `127.0.0.1:${port}`, '--config', configFile]), { cwd: dir, env: cleanEnv(), stdout: 'ignore', stderr: 'ignore' })
  try {
    for (;;) {
      if (performance.now() - t0 > 10_000) throw new Error('cold start: no 200 within 10 s')
      try {
        const r = await fetch(`http://127.0.0.1:${port}/api/v1/send`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body,
        })
        if (r.status === 200) return performance.now() - t0
      } catch {
        await Bun.sleep(1)
      }
    }
  } finally {
    proc.kill('SIGTERM')
    await proc.exited
  }
}

// ---------------------------------------------------------------- main

/** Sizes of otpd's answers, for the baseline to answer as much. */
const sample = { uuid: '00000000-0000-4000-8000-000000000000', at: '2026-01-01T00:00:00.000Z' }
const SEND_BYTES = JSON.stringify({ success: true, verification_id: sample.uuid, expires_at: sample.at, request_id: sample.uuid }).length
const VERIFY_BYTES = JSON.stringify({ success: true, verified: false, message: 'Invalid code', request_id: sample.uuid }).length

async function main() {
  if (clientCpus !== undefined) {
    // This script drains the servers' output and seeds over HTTP: it is load-side work.
    const t = Bun.spawnSync(['taskset', '-a', '-p', '-c', clientCpus, String(process.pid)], { stdout: 'ignore', stderr: 'pipe' })
    if (t.exitCode !== 0) throw new Error(`taskset: ${t.stderr.toString()}`)
  }
  if (!opt['no-build']) {
    log('building dist/otpd')
    const b = Bun.spawnSync(['bun', 'run', 'build'], { cwd: ROOT, stdout: 'ignore', stderr: 'pipe' })
    if (b.exitCode !== 0) throw new Error(`build failed: ${b.stderr.toString()}`)
  }
  const binaryMb = round1(statSync(binary).size / 1024 / 1024)

  log('cold start (5 runs)')
  const colds: number[] = []
  for (let i = 0; i < 5; i++) colds.push(await coldStart())
  colds.sort((a, b) => a - b)

  log('baseline: bare Bun.serve')
  const base = await start(['bun', join(ROOT, 'scripts', 'bench-baseline.ts')], { BENCH_SEND_BYTES: String(SEND_BYTES), BENCH_VERIFY_BYTES: String(VERIFY_BYTES) }, scratch)
  // Real-looking ids: the baseline parses the same bodies as otpd.
  const ids = join(scratch, 'ids.txt')
  writeFileSync(ids, Array.from({ length: 100 }, () => crypto.randomUUID()).join('\n') + '\n')
  const otpdRuns: Record<string, Awaited<ReturnType<typeof benchMode>>> = {}
  try {
    for (const mode of modes) {
      otpdRuns[mode] = await benchMode(mode, (ep) => {
        log(`baseline: ${ep} (${warmup} s warm-up + ${duration} s), paired with otpd ${mode}`)
        return measure(`bench-${ep}.lua`, base, { BENCH_KEY: 'otpd_baseline', BENCH_IDS_OK: ids, BENCH_IDS_WRONG: ids })
      })
    }
  } finally {
    await base.stop()
  }

  const report = {
    date: new Date().toISOString(),
    machine: { cpus: navigator.hardwareConcurrency, bun: Bun.version, platform: `${process.platform} ${process.arch}` },
    settings: {
      duration_s: duration,
      warmup_s: warmup,
      connections,
      wrk_threads: threads,
      seed_per_pool: Number(opt.seed),
      pace_ms: paceMs,
      server_cpus: serverCpus ?? null,
      client_cpus: clientCpus ?? null,
    },
    binary_mb: binaryMb,
    cold_start_ms: { median: round1(colds[2]!), min: round1(colds[0]!), max: round1(colds[4]!) },
    otpd: otpdRuns,
  }
  writeFileSync(resolve(ROOT, opt.out), JSON.stringify(report, null, 2) + '\n')
  printSummary(report)
}

function printSummary(r: {
  otpd: Record<string, { baseline: Record<string, RunResult>; results: Record<string, RunResult>; process_peak_rss_mb: number | null }>
  cold_start_ms: { median: number }
  binary_mb: number
}) {
  const ms = (us: number) => (us / 1000).toFixed(2)
  const rows: string[][] = [['endpoint', 'server', 'req/s', 'p50 ms', 'p99 ms', 'vs baseline', 'CPU us/req', 'server CPU %', 'peak RSS MB', 'steal %', 'statuses']]
  const st = (s: Record<string, number>) => Object.entries(s).map(([k, v]) => `${k}:${v}`).join(' ')
  // Server CPU %: the server's CPU time over the run's length (100 = one core busy all the time).
  const busy = (x: RunResult) => (x.cpu_us_per_req === null ? '-' : String(Math.round((x.cpu_us_per_req * x.rps) / 1e4)))
  const row = (ep: string, server: string, x: RunResult, ratio: string) =>
    [ep, server, String(x.rps), ms(x.p50_us), ms(x.p99_us), ratio, String(x.cpu_us_per_req ?? '-'), busy(x), String(x.peak_rss_mb ?? '-'), String(x.steal_pct ?? '-'), st(x.statuses)]
  for (const ep of endpoints) {
    for (const [mode, run] of Object.entries(r.otpd)) {
      rows.push(row(ep, `baseline (${mode} pair)`, run.baseline[ep]!, '1.000'))
      const x = run.results[ep]!
      rows.push(row(ep, `otpd ${mode}`, x, x.ratio_to_baseline!.toFixed(3)))
    }
  }
  if (paceMs > 0) console.log(`paced: each connection waits ${paceMs} ms after every answer (below saturation; the targets are set without pacing)`)
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)))
  for (const row of rows) console.log(row.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd())
  for (const ep of endpoints) {
    for (const [mode, run] of Object.entries(r.otpd)) {
      const x = run.results[ep]!
      const b = run.baseline[ep]!
      console.log(`${ep} otpd ${mode}: p99 ${ms(x.p99_us)} ms, ${(x.p99_us / b.p99_us).toFixed(1)}x its paired baseline's ${ms(b.p99_us)} ms (the machine's own tail)`)
      const w = x.wal_flush
      if (!w) continue
      console.log(
        `${ep} otpd ${mode}: ${w.flushes} WAL flushes, mean ${w.mean_ms} ms, 99 % within ${w.p99_ms_at_most ?? '-'} ms, ${w.at_least_25ms} of 25 ms or more (the disk's part of the tail)`,
      )
    }
  }
  const full = r.otpd.FULL?.results
  const normal = r.otpd.NORMAL?.results
  if (full && normal) {
    for (const ep of endpoints) console.log(`${ep}: NORMAL/FULL throughput = ${(normal[ep]!.rps / full[ep]!.rps).toFixed(2)}x`)
  }
  console.log(`cold start (process start to first 200): ${r.cold_start_ms.median} ms median of 5`)
  console.log(`binary size: ${r.binary_mb} MB`)
  console.log(`figures written to ${opt.out}`)
}

try {
  await main()
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
