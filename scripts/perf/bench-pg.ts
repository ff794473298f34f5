/**
 * scripts/bench --database postgres [--nodes N]: the same endpoints measured
 * on SQLite, on PostgreSQL with one node and with N nodes, in one run, each on
 * a fresh database seeded the same way, and printed side by side as ratios to
 * the SQLite run of the same endpoint. PostgreSQL is a throwaway cluster
 * (scripts/kit/pg-cluster.ts: fsync on) on the same machine, reached over
 * 127.0.0.1 or (--pg-via socket) through its unix socket; with
 * several nodes wrk's threads are spread over their ports (bench-stats.lua).
 * Server CPU per request counts every otpd node and every PostgreSQL process.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { warmUp, wrk, type LoadSettings, type RunResult } from './bench-load.ts'
import { benchConfig, seedKeys, setUpAccounts, type OtpdSettings } from './bench-otpd.ts'
import { cpuUs, machineCpu, round1, rssMb, startServer, type Proc } from './bench-proc.ts'
import { sharedCluster } from '../kit/pg-cluster.ts'

export interface PgSeeded {
  dir: string
  nodes: Proc[]
  /** BENCH_KEY, the id pools and BENCH_PORTS for the Lua scripts. */
  env: Record<string, string>
}

/** The bench config (bench-otpd.ts) on a PostgreSQL database, with a shared secret. */
function pgBenchConfig(dir: string, url: string, metricsToken: string, poolSize: number, binary: string): string {
  return benchConfig(dir, 'FULL', metricsToken, binary, {
    server: `secret = "${randomBytes(32).toString('hex')}"\n`,
    database: `url = "${url}"\npool_size = ${poolSize}`,
  })
}

/** How the nodes reach PostgreSQL: over 127.0.0.1, or through its unix socket (a node on its machine). */
export type PgVia = 'tcp' | 'socket'

/** A fresh PostgreSQL database, N nodes on it, seeded like startSeeded() seeds SQLite. */
export async function startPgSeeded(
  s: OtpdSettings,
  binary: string,
  nodes: number,
  label: string,
  poolSize: number,
  keys = 1,
  via: PgVia = 'tcp',
): Promise<PgSeeded> {
  const tcp = new URL(await sharedCluster().freshDatabase('bench'))
  // The socket's directory as a host= parameter (docs/multi-node.md#configuration).
  const url = via === 'tcp' ? tcp.href : `postgres://${tcp.username}@localhost:${tcp.port}${tcp.pathname}?host=${sharedCluster().dir}`
  const dir = mkdtempSync(join(s.scratch, `${label}-`))
  const configFile = pgBenchConfig(dir, url, s.metricsToken, poolSize, binary)
  const accounts = await setUpAccounts(binary, configFile, dir, keys)
  const started: Proc[] = []
  try {
    for (let i = 0; i < nodes; i++) started.push(await startServer([binary, 'serve', '--listen', '127.0.0.1:0', '--config', configFile], {}, dir, s.serverCpus))
    const ports = started.map((n) => new URL(n.url).port).join(',')
    return { dir, nodes: started, env: { BENCH_PORTS: ports, ...(await seedKeys(started[0]!.url, dir, accounts.keys, s.seed)), ...accounts.env } }
  } catch (e) {
    await Promise.all(started.map((n) => n.stop()))
    throw e
  }
}

/** The cluster's processes: the postmaster and its children (backends, walwriter, checkpointer...). */
function postgresPids(): number[] {
  const c = sharedCluster()
  const master = Number(readFileSync(join(c.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0])
  const pids = [master]
  for (const d of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(d)) continue
    try {
      const ppid = Number(readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ')[1])
      if (ppid === master) pids.push(Number(d))
    } catch {
      // gone meanwhile
    }
  }
  return pids
}

/** wrk threads: at least `threads`, a multiple of the nodes and of the keys, so each gets an equal share. */
export function spreadThreads(threads: number, nodes: number, keys: number): number {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b))
  const lcm = (nodes * keys) / gcd(nodes, keys)
  return Math.ceil(Math.max(threads, lcm) / lcm) * lcm
}

const cpuOf = (pids: number[]) => new Map(pids.map((p) => [p, cpuUs(p) ?? 0]))

/**
 * Like bench-load's measure(), over every node, with PostgreSQL's CPU counted
 * in the server's; the warm-up lasts until every node's JIT has settled
 * (bench-load.ts warmUp).
 */
export async function measureNodes(
  s: LoadSettings,
  lua: string,
  nodes: Proc[],
  env: Record<string, string>,
  keys = 1,
): Promise<RunResult & { otpd_cpu_us_per_req: number | null }> {
  const url = nodes[0]!.url
  const load = { ...s, threads: spreadThreads(s.threads, nodes.length, keys) }
  const warm = await warmUp(
    load,
    lua,
    url,
    env,
    nodes.map((n) => n.pid),
  )
  let peak = 0
  const timer = setInterval(
    () =>
      (peak = Math.max(
        peak,
        nodes.reduce((a, n) => a + (rssMb(n.pid, 'VmRSS') ?? 0), 0),
      )),
    100,
  )
  const nodePids = nodes.map((n) => n.pid)
  const pg0 = cpuOf(postgresPids())
  const otpd0 = cpuOf(nodePids)
  const m0 = machineCpu()
  const f = await wrk(load, lua, url, s.duration, { ...env, BENCH_RUN: '2' })
  const m1 = machineCpu()
  const otpd1 = cpuOf(nodePids)
  const pg1 = cpuOf(postgresPids())
  clearInterval(timer)
  const delta = (a: Map<number, number>, b: Map<number, number>) => [...b].reduce((sum, [p, t]) => sum + t - (a.get(p) ?? 0), 0)
  const otpdUs = delta(otpd0, otpd1)
  const server = otpdUs + delta(pg0, pg1)
  const all = m0 === null || m1 === null ? 0 : m1.total - m0.total
  const steal = all ? round1(((m1!.steal - m0!.steal) * 100) / all) : null
  const others = all && f.wrk_cpu_us !== undefined ? round1((Math.max(0, m1!.busy - m0!.busy - server - f.wrk_cpu_us) * 100) / all) : null
  return {
    ...f,
    rps: Math.round(f.requests / (f.duration_us / 1e6)),
    cpu_us_per_req: round1(server / f.requests),
    otpd_cpu_us_per_req: round1(otpdUs / f.requests),
    peak_rss_mb: peak ? round1(peak) : null,
    steal_pct: steal,
    others_pct: others,
    ...warm,
  }
}

export interface DatabaseRow extends RunResult {
  server: string
  keys: number
  ratio_to_sqlite: number
  otpd_cpu_us_per_req?: number | null
  errors_logged: number
}

/** The side-by-side table: per endpoint, SQLite then PostgreSQL 1 node and N nodes, ratios to SQLite. */
export function printDatabases(rows: Record<string, DatabaseRow[]>): void {
  const ms = (us: number) => (us / 1000).toFixed(2)
  const out = [
    [
      'endpoint',
      'keys',
      'database',
      'req/s',
      'ratio to SQLite',
      'p50 ms',
      'p99 ms',
      'CPU us/req (otpd+pg)',
      'otpd CPU us/req',
      'others %',
      'warm-up req (s)',
      'errors',
      'statuses',
    ],
  ]
  for (const [ep, list] of Object.entries(rows)) {
    for (const r of list) {
      out.push([
        ep,
        String(r.keys),
        r.server,
        String(r.rps),
        r.ratio_to_sqlite.toFixed(2),
        ms(r.p50_us),
        ms(r.p99_us),
        String(r.cpu_us_per_req ?? '-'),
        String(r.otpd_cpu_us_per_req ?? r.cpu_us_per_req ?? '-'),
        String(r.others_pct ?? '-'),
        `${r.warmup_requests ?? '-'} (${r.warmup_s ?? '-'}${r.warmup_settled === false ? ', JIT busy' : ''})`,
        String(r.errors_logged),
        Object.entries(r.statuses)
          .map(([k, v]) => `${k}:${v}`)
          .join(' '),
      ])
    }
  }
  const widths = out[0]!.map((_, i) => Math.max(...out.map((r) => r[i]!.length)))
  console.log('\n== SQLite and PostgreSQL, same run (ratios: req/s over the SQLite run of the same endpoint) ==')
  for (const r of out)
    console.log(
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
}
