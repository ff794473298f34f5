/**
 * The load side of scripts/bench: one wrk run with a Lua script from
 * scripts/, and a measured run (warm-up, then the run with the server's CPU
 * time, peak RSS and the machine's steal around it).
 */
import { join } from 'node:path'
import { flushFigures, parseFlushes, parseOutboxDepth, type WalFlushFigures } from './flush-figures.ts'
import { cleanEnv, cpuUs, machineCpu, pinned, round1, rssMb, threadCpuUs, type Proc } from './bench-proc.ts'

export interface LoadSettings {
  duration: number
  warmup: number
  connections: number
  threads: number
  paceMs: number
  clientCpus: string | undefined
  luaDir: string
}

export interface WrkFigures {
  requests: number
  duration_us: number
  p50_us: number
  p90_us: number
  p99_us: number
  max_us: number
  socket_errors: number
  statuses: Record<string, number>
  /** wrk's own CPU time (user + system), in microseconds. */
  wrk_cpu_us?: number
}

export interface RunResult extends WrkFigures {
  rps: number
  /** Server CPU time (user + system, all threads) per request: steadier than req/s on a shared machine. */
  cpu_us_per_req: number | null
  peak_rss_mb: number | null
  /** Share of the machine's CPU time the hypervisor gave to others during the run (/proc/stat steal): how noisy the run was. */
  steal_pct: number | null
  /**
   * Share of the machine's CPU time (all CPUs) that went to neither the server
   * nor wrk during the run: other work on a shared machine, which moves req/s.
   */
  others_pct: number | null
  ratio_to_baseline?: number
  /** Requests served by the warm-up before the measured run, the seconds it took, and whether the JIT had settled by its end (warmUp). */
  warmup_requests?: number
  warmup_s?: number
  warmup_settled?: boolean
  /** The WAL flushes made during the measured run, from the server's /metrics (otpd_wal_flush_seconds), when it has them. */
  wal_flush?: WalFlushFigures | null
  /** Webhook deliveries still pending when the measured run ended (otpd_webhook_outbox_depth): what the dispatcher had not caught up with. */
  outbox_depth?: number | null
}

export async function wrk(s: LoadSettings, lua: string, url: string, seconds: number, env: Record<string, string>): Promise<WrkFigures> {
  const cmd = ['wrk', `-t${s.threads}`, `-c${s.connections}`, `-d${seconds}s`, '--timeout', '5s', '-s', join(s.luaDir, lua), url]
  const p = Bun.spawn(pinned(s.clientCpus, cmd), {
    env: { ...cleanEnv(), BENCH_LUA_DIR: s.luaDir, BENCH_PACE_MS: String(s.paceMs), BENCH_THREADS: String(s.threads), ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  const line = /^BENCH_JSON (.*)$/m.exec(stdout)?.[1]
  if (code !== 0 || !line) throw new Error(`wrk failed (${code}):\n${stdout}\n${stderr}`)
  const cpu = p.resourceUsage()?.cpuTime.total
  return { ...(JSON.parse(line) as WrkFigures), wrk_cpu_us: cpu === undefined ? undefined : Number(cpu) }
}

/** The JIT counts as settled once its compiler threads took under this share of a server's CPU in a warm-up step. */
export const JIT_QUIET = 0.05
/** The longest warm-up a run gets for its JIT to settle. */
export const WARMUP_CAP_S = 90
/** The BENCH_RUN of each warm-up step in turn: every last digit but the measured run's (2). */
const WARMUP_RUNS = [1, 3, 4, 5, 6, 7, 8, 9, 0]

/**
 * The warm-up: wrk runs of `s.warmup` seconds until, in one of them, the
 * JIT's compiler threads (JavaScriptCore's `JITWorker`) of every server in
 * `pids` took under JIT_QUIET of its CPU, at most WARMUP_CAP_S. The JIT
 * compiles a function after so many calls, not seconds: a server a tenth as
 * fast (otpd on PostgreSQL), or one of several nodes, was still compiling
 * after a warm-up that settled SQLite's (docs/benchmarks.md#method). Each
 * step sends to numbers of its own (bench-send.lua: the run's last digit
 * leads them), never those of the measured run (BENCH_RUN 2); they repeat
 * only after nine steps.
 */
export async function warmUp(
  s: LoadSettings,
  lua: string,
  url: string,
  env: Record<string, string>,
  pids: number[],
): Promise<Required<Pick<RunResult, 'warmup_requests' | 'warmup_s' | 'warmup_settled'>>> {
  let requests = 0
  let us = 0
  if (s.warmup <= 0) return { warmup_requests: 0, warmup_s: 0, warmup_settled: true }
  for (let step = 0; ; step++) {
    const before = pids.map((p) => [cpuUs(p) ?? 0, threadCpuUs(p, 'JITWorker')] as const)
    const w = await wrk(s, lua, url, s.warmup, { ...env, BENCH_RUN: String(WARMUP_RUNS[step % WARMUP_RUNS.length]) })
    requests += w.requests
    us += w.duration_us
    const settled = pids.every((p, i) => {
      const cpu = (cpuUs(p) ?? 0) - before[i]![0]
      return cpu <= 0 || (threadCpuUs(p, 'JITWorker') - before[i]![1]) / cpu < JIT_QUIET
    })
    if (settled || us + s.warmup * 1e6 > WARMUP_CAP_S * 1e6) return { warmup_requests: requests, warmup_s: round1(us / 1e6), warmup_settled: settled }
  }
}

/**
 * Warm-up, then the measured run, sampling the server's RSS every 100 ms;
 * with `metrics`, the server's /metrics is read before and after the measured
 * run (its WAL flushes in between, its webhook outbox depth at the end).
 */
export async function measure(
  s: LoadSettings,
  lua: string,
  target: Proc,
  env: Record<string, string>,
  metrics?: () => Promise<string | null>,
): Promise<RunResult> {
  const warm = await warmUp(s, lua, target.url, env, [target.pid])
  const before = await metrics?.()
  let peak = 0
  const timer = setInterval(() => (peak = Math.max(peak, rssMb(target.pid, 'VmRSS') ?? 0)), 100)
  const cpu0 = cpuUs(target.pid)
  const m0 = machineCpu()
  const f = await wrk(s, lua, target.url, s.duration, { ...env, BENCH_RUN: '2' })
  const cpu1 = cpuUs(target.pid)
  const m1 = machineCpu()
  clearInterval(timer)
  const server = cpu0 === null || cpu1 === null ? null : cpu1 - cpu0
  const cpu = server === null ? null : round1(server / f.requests)
  const all = m0 === null || m1 === null ? 0 : m1.total - m0.total
  const steal = all ? round1(((m1!.steal - m0!.steal) * 100) / all) : null
  const others = all && server !== null && f.wrk_cpu_us !== undefined ? round1((Math.max(0, m1!.busy - m0!.busy - server - f.wrk_cpu_us) * 100) / all) : null
  const rps = Math.round(f.requests / (f.duration_us / 1e6))
  const result: RunResult = {
    ...f,
    rps,
    cpu_us_per_req: cpu,
    peak_rss_mb: peak ? round1(peak) : null,
    steal_pct: steal,
    others_pct: others,
    ...warm,
  }
  if (metrics) {
    const after = await metrics()
    const h0 = before ? parseFlushes(before) : null
    const h1 = after ? parseFlushes(after) : null
    result.wal_flush = h0 && h1 ? flushFigures(h0, h1) : null
    result.outbox_depth = after ? parseOutboxDepth(after) : null
  }
  return result
}

/** otpd's /metrics text; null when it cannot be read. */
export async function scrapeMetrics(url: string, token: string): Promise<string | null> {
  try {
    const r = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })
    return r.ok ? await r.text() : null
  } catch {
    return null
  }
}
