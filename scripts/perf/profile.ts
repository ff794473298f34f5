/**
 * Where a request's microseconds go (docs/benchmarks.md#where-a-requests-time-goes):
 * `otpd serve` from source under Bun's sampling CPU profiler, the bench's load
 * (bench-send.lua, bench-verify.lua) on its seeded database, and every sample
 * of the measured window charged to one part of the request: the part of the
 * innermost frame of otpd's own code on its stack (so SQLite's and
 * libphonenumber-js's time counts for the otpd function that called them).
 * A sample with no otpd frame is Elysia's routing or Bun's runtime (HTTP,
 * event loop, GC). Prints one table per endpoint, in µs per request.
 *
 * Usage: scripts/profile [--endpoints send,verify] [--duration S] [--interval US] [--detail PART] [--database sqlite|postgres]
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { startSeeded } from './bench-otpd.ts'
import { startPgSeeded } from './bench-pg.ts'
import { warmUp, wrk } from './bench-load.ts'

const { values: opt } = parseArgs({
  options: {
    endpoints: { type: 'string', default: 'send,verify' },
    duration: { type: 'string', default: '15' },
    interval: { type: 'string', default: '250' },
    seed: { type: 'string', default: '3000' },
    /** A part to break down by otpd function (the innermost one on the stack). */
    detail: { type: 'string' },
    /** sqlite, or postgres: one node on a throwaway cluster (scripts/perf/bench-pg.ts), its pool of 10. */
    database: { type: 'string', default: 'sqlite' },
    help: { type: 'boolean', default: false },
  },
})
if (opt.help) {
  console.log(`usage: scripts/profile [--endpoints send,verify] [--duration S] [--interval US] [--detail PART] [--database sqlite|postgres]

Runs otpd serve from source under Bun's CPU profiler with the bench's set-up and load, and prints
where each request's microseconds go, by part (docs/benchmarks.md#where-a-requests-time-goes).
--detail PART        breaks that part down by otpd function
--database postgres  one node on a throwaway PostgreSQL cluster (PostgreSQL's own CPU is not in the table)`)
  process.exit(0)
}
if (opt.database !== 'sqlite' && opt.database !== 'postgres') throw new Error(`profile: unknown database ${opt.database} (sqlite, postgres)`)
const root = resolve(import.meta.dir, '../..')
const main = join(root, 'src/main.ts')

/** The part of a request an otpd source file (and, where one file holds several, a function) belongs to. */
const PARTS: [RegExp, string][] = [
  [/http\/(body|validate|models)\.ts$/, 'parse and validate'],
  [/http\/guard\.ts$|otp\/api-keys\.ts$/, 'auth'],
  [/otp\/key-limiter\.ts$|(sqlite|pg)\/event-logs\.ts$/, 'key limit and failure log'],
  [/otp\/idempotency\.ts$|http\/idempotency\.ts$|(sqlite|pg)\/idempotency-store\.ts$/, 'idempotency'],
  [/http\/[a-z-]+-route\.ts$|http\/app\.ts$|src\/app\.ts$/, 'route handler'],
  [/otp\/fraud\.ts$|lib\/phone-country\.ts$|(sqlite|pg)\/fraud-store\.ts$/, 'fraud guard (country, prefix, counters)'],
  [/otp\/(windows|failure-cap|recipient-identity)\.ts$/, 'recipient windows'],
  [/otp\/messages\/|lib\/sms-encoding\.ts$/, 'message text'],
  [/otp\/events\.ts$|(sqlite|pg)\/event-store\.ts$/, 'event'],
  [/sqlite\/(storage|wal-sync|write-turn|runner)\.ts$|pg\/(storage|client|locks)\.ts$/, 'transaction and commit'],
  [/delivery\//, 'delivery (noop provider)'],
  [/src\/events\/|(sqlite|pg)\/webhook-store\.ts$|lib\/secret-box\.ts$/, 'webhook delivery (events to the endpoint)'],
  [/http\/(reply|respond|request-log|service-metrics)\.ts$|lib\/(logger|prometheus)\.ts$/, 'answer (JSON, log line, metrics)'],
  [/lib\/(secrets|verification-id|random)\.ts$/, 'hashing, codes and ids'],
]
/** Functions of the verification and credit stores, by what they do. */
const STORE_FUNCTIONS: Record<string, string> = {
  insert: 'insert (verification, debit)',
  nextSeq: 'insert (verification, debit)',
  debit: 'insert (verification, debit)',
  sendProfile: 'insert (verification, debit)',
  settleDelivery: 'settle',
  findForKey: 'read the verification',
  recipientSendTimes: 'recipient windows',
  markUsed: 'verify rules',
  setAttempts: 'verify rules',
}

function partOf(url: string, fn: string): string | null {
  if (!url.includes('/src/')) return null
  if (/(sqlite|pg)\/(verification|admin)-store\.ts$/.test(url)) return STORE_FUNCTIONS[fn] ?? 'other store reads'
  if (/otp\/send\.ts$/.test(url)) return 'send rules'
  if (/otp\/verify\.ts$/.test(url)) return 'verify rules'
  for (const [re, part] of PARTS) if (re.test(url)) return part
  return 'other otpd code'
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[]
  samples: number[]
  timeDeltas: number[]
}

/** µs per part in the window [fromUs, toUs] of the profile's own time line (from its first sample). */
function charge(p: CpuProfile, fromUs: number, toUs: number, detail?: string): { parts: Map<string, number>; functions: Map<string, number> } {
  const parent = new Map<number, number>()
  const byId = new Map(p.nodes.map((n) => [n.id, n]))
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const partOfNode = new Map<number, string>()
  const resolvePart = (id: number): string => {
    const known = partOfNode.get(id)
    if (known !== undefined) return known
    const n = byId.get(id)!
    const own = partOf(n.callFrame.url, n.callFrame.functionName)
    const up = parent.get(id)
    let part: string
    if (own !== null) part = own
    else if (up !== undefined) part = resolvePart(up)
    else part = ''
    partOfNode.set(id, part)
    return part
  }
  const out = new Map<string, number>()
  const functions = new Map<string, number>()
  /** The innermost otpd frame of a node, as file:function. */
  const ownFrame = (id: number | undefined): string => {
    for (; id !== undefined; id = parent.get(id)) {
      const f = byId.get(id)!.callFrame
      if (f.url.includes('/src/')) return `${f.url.slice(f.url.indexOf('/src/') + 1)}:${f.functionName || '(anonymous)'}`
    }
    return '(none)'
  }
  let t = 0
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i]!
    if (t < fromUs || t > toUs) continue
    const dt = p.timeDeltas[i + 1] ?? 0
    let part = resolvePart(p.samples[i]!)
    if (part === '') {
      // No otpd frame: the framework's routing, or the runtime itself.
      let id: number | undefined = p.samples[i]
      part = 'Bun runtime (HTTP, event loop, GC)'
      for (; id !== undefined; id = parent.get(id)) {
        if (byId.get(id)!.callFrame.url.includes('node_modules/elysia')) {
          part = 'Elysia routing'
          break
        }
      }
    }
    out.set(part, (out.get(part) ?? 0) + dt)
    if (part === detail) {
      const f = ownFrame(p.samples[i])
      functions.set(f, (functions.get(f) ?? 0) + dt)
    }
  }
  return { parts: out, functions }
}

async function profile(endpoint: 'send' | 'verify'): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `otpd-profile-${endpoint}-`))
  try {
    // otpd from source as a file the bench's helpers run like a binary; `serve` under the profiler.
    const cli = join(dir, 'otpd')
    const prof = `--cpu-prof --cpu-prof-interval=${opt.interval} --cpu-prof-dir=${dir}`
    writeFileSync(cli, `#!/bin/sh\nif [ "$1" = serve ]; then exec ${process.execPath} ${prof} ${main} "$@"; fi\nexec ${process.execPath} ${main} "$@"\n`)
    chmodSync(cli, 0o755)
    // The bench's own set-up (scripts/perf/bench-otpd.ts): its config, accounts, keys, webhook endpoint and numbers.
    const settings = {
      scratch: dir,
      serverCpus: undefined,
      metricsToken: 'profile-metrics-token-'.padEnd(40, 'x'),
      seed: endpoint === 'verify' ? Number(opt.seed) : 0,
    }
    const { server, env } =
      opt.database === 'postgres'
        ? await startPgSeeded(settings, cli, 1, 'profile', 10).then((s) => ({ server: s.nodes[0]!, env: s.env }))
        : await startSeeded(settings, cli, 'FULL', 'profile')
    const load = { duration: Number(opt.duration), warmup: 3, connections: 64, threads: 1, paceMs: 0, clientCpus: undefined, luaDir: import.meta.dir }
    // Measured once the JIT has settled, as the bench measures (bench-load.ts warmUp).
    await warmUp(load, `bench-${endpoint}.lua`, server.url, env, [server.pid])
    const loadFrom = performance.now()
    const figures = await wrk(load, `bench-${endpoint}.lua`, server.url, load.duration, { ...env, BENCH_RUN: '2' })
    const loadTo = performance.now()
    await server.stop()
    const stopped = performance.now()
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))
    if (!file) throw new Error('the server wrote no CPU profile')
    const p = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile
    // The profile ends as the server exits: the measured run is placed back from there.
    const end = p.timeDeltas.reduce((a, b) => a + b, 0)
    const { parts, functions } = charge(p, end - (stopped - loadFrom) * 1000, end - (stopped - loadTo) * 1000, opt.detail)
    const total = [...parts.values()].reduce((a, b) => a + b, 0)
    const rps = figures.requests / (figures.duration_us / 1e6)
    console.log(`\n${endpoint}: ${Math.round(rps)} req/s from source under the profiler, p99 ${(figures.p99_us / 1000).toFixed(2)} ms`)
    console.log('| part | µs per request | share |')
    console.log('|---|---:|---:|')
    for (const [part, us] of [...parts].sort((a, b) => b[1] - a[1])) {
      console.log(`| ${part} | ${(us / figures.requests).toFixed(1)} | ${((100 * us) / total).toFixed(1)} % |`)
    }
    console.log(`| **all** | **${(total / figures.requests).toFixed(1)}** | |`)
    if (opt.detail !== undefined) {
      console.log(`\n${opt.detail}, by otpd function:`)
      for (const [f, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`  ${(us / figures.requests).toFixed(1).padStart(6)} µs  ${f}`)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

for (const e of opt.endpoints!.split(',')) {
  if (e !== 'send' && e !== 'verify') throw new Error(`profile: unknown endpoint ${e} (send, verify)`)
  await profile(e)
}
