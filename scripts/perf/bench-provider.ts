/**
 * `scripts/bench --provider-latency MS[,MS...] --connections N`: sends
 * against slow providers (docs/benchmarks.md#slow-providers). A local gateway
 * (`type = "webhook"`, one per latency, tried in that order) answers every
 * message after its latency; wrk sends to new numbers over N connections
 * (limits raised, the fraud guard off). Prints sends/s, p50, p99, the
 * server's peak RSS, the answers by status and Little's-law bound
 * N / latency, the most a client of N connections can get when every send
 * waits for the first provider. `--provider-timeout MS` gives every provider
 * that `timeout_ms`; `--with-verify C` runs a verify load of C connections,
 * each pausing 10 ms between requests, beside the sends (verifications to a test recipient, seeded first).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { measure, scrapeMetrics, wrk, type LoadSettings, type RunResult, type WrkFigures } from './bench-load.ts'
import { checkNumberTemplates, initArgs, otpdCli, writeIdPools } from './bench-otpd.ts'
import { round1, rssMb, startServer } from './bench-proc.ts'

export interface ProviderBench {
  latencies: number[]
  timeoutMs: number | undefined
  /** `[delivery]` lines: circuit_failures, max_sends_in_flight, when given. */
  delivery: Record<string, number>
  /** Connections of a verify load run beside the sends' (0: none). */
  verifyConnections: number
  scratch: string
  metricsToken: string
  serverCpus: string | undefined
}

const SECRET = 'bench-gateway-secret'
/** The verify load's pause between a connection's requests (--with-verify). */
const VERIFY_PACE_MS = 10

/** One loopback server answering `/p<i>` after latencies[i] ms; counts what it holds at once. */
function startGateway(latencies: number[]) {
  const state = { inFlight: 0, peak: 0, received: 0 }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      await req.arrayBuffer()
      const i = Number(new URL(req.url).pathname.slice(2))
      state.received++
      state.inFlight++
      state.peak = Math.max(state.peak, state.inFlight)
      await Bun.sleep(latencies[i] ?? 0)
      state.inFlight--
      return new Response(null, { status: 204 })
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, state, stop: () => server.stop(true) }
}

function config(dir: string, gateway: string, b: ProviderBench): string {
  const file = join(dir, 'otp.config.toml')
  const big = 1_000_000_000
  const names = b.latencies.map((_, i) => `gw${i}`)
  const providers = names
    .map(
      (name, i) =>
        `[providers.${name}]\ntype = "webhook"\nurl = "${gateway}/p${i}"\nsecret_env = "BENCH_GATEWAY_SECRET"\n${b.timeoutMs === undefined ? '' : `timeout_ms = ${b.timeoutMs}\n`}`,
    )
    .join('\n')
  writeFileSync(
    file,
    `[server]
metrics_token = "${b.metricsToken}"
[database]
path = "${join(dir, 'otpd.db')}"
[limits]
key_requests_per_minute = ${big}
recipient_per_minute = ${big}
recipient_per_hour = ${big}
recipient_per_day = ${big}
max_failed_attempts = ${big}
recipient_failures_per_day = ${big}
[fraud]
mode = "off"
[delivery]
${Object.entries(b.delivery)
  .map(([k, v]) => `${k} = ${v}`)
  .join('\n')}
[channels]
sms = [${names.map((n) => `"${n}"`).join(', ')}]
${providers}`,
  )
  return file
}

export interface ProviderRun extends RunResult {
  latencies_ms: number[]
  provider_timeout_ms: number | null
  /** N / each provider's latency: the most sends/s N connections can get when every send waits for that one. */
  littles_law_bound_rps: number[]
  delivery: Record<string, number>
  gateway_peak_in_flight: number
  process_peak_rss_mb: number | null
  /** The verify load beside the sends (--with-verify). */
  verify: WrkFigures | null
}

/** Verifications to test recipients (code 123456, nothing delivered), for the verify load's id pools. */
async function seedTestRecipients(url: string, key: string, dir: string, n: number): Promise<Record<string, string>> {
  const send = async () => {
    const r = await fetch(`${url}/api/v1/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ channel: 'sms', recipient: '+15550100001', expires_in: 3600 }),
    })
    const j = (await r.json()) as { verification_id?: string }
    if (!j.verification_id) throw new Error(`seed send answered ${r.status}`)
    return j.verification_id
  }
  const ids: string[] = []
  for (let i = 0; i < 2 * n; i += 50) ids.push(...(await Promise.all(Array.from({ length: 50 }, send))))
  return writeIdPools(dir, ids.slice(0, n), ids.slice(n))
}

export async function benchProviders(load: LoadSettings, binary: string, b: ProviderBench, log: (s: string) => void): Promise<ProviderRun> {
  const dir = mkdtempSync(join(b.scratch, 'provider-'))
  const gateway = startGateway(b.latencies)
  try {
    const file = config(dir, gateway.url, b)
    const key = JSON.parse(otpdCli(binary, ['keys', 'create', ...initArgs(binary), '--json'], file, dir)).key as string
    otpdCli(binary, ['credits', 'add', '1000000000'], file, dir)
    const server = await startServer([binary, 'serve', '--listen', '127.0.0.1:0', '--config', file], { BENCH_GATEWAY_SECRET: SECRET }, dir, b.serverCpus)
    try {
      log(`providers answering after ${b.latencies.join(', ')} ms: send over ${load.connections} connections (warm-up ${load.warmup} s + ${load.duration} s)`)
      const env = { BENCH_KEY: key, BENCH_NUMBERS: await checkNumberTemplates() }
      const pools = b.verifyConnections > 0 ? await seedTestRecipients(server.url, key, dir, 500) : null
      // One warm-up step, not measure()'s wait for the JIT (up to 90 s): the run stays short on a shared machine.
      if (load.warmup > 0) await wrk(load, 'bench-send.lua', server.url, load.warmup, { ...env, BENCH_RUN: '1' })
      // The warm-up's sends still at the gateway would add to the measured run's: they end first.
      const drained = performance.now() + Math.max(...b.latencies) + 2_000
      while (gateway.state.inFlight > 0 && performance.now() < drained) await Bun.sleep(20)
      // The verify load, when asked, runs the same seconds as the measured sends; paced (VERIFY_PACE_MS),
      // it shows what a verify waits for beside the sends, not verify's own saturation.
      const verifyLoad = { ...load, connections: b.verifyConnections, threads: 1, paceMs: VERIFY_PACE_MS }
      const verifying = pools && wrk(verifyLoad, 'bench-verify.lua', server.url, load.duration, { BENCH_KEY: key, ...pools })
      const r = await measure({ ...load, warmup: 0 }, 'bench-send.lua', server, env, () => scrapeMetrics(server.url, b.metricsToken))
      const verify = verifying ? await verifying : null
      const hwm = rssMb(server.pid, 'VmHWM')
      return {
        ...r,
        latencies_ms: b.latencies,
        provider_timeout_ms: b.timeoutMs ?? null,
        littles_law_bound_rps: b.latencies.map((ms) => Math.round(load.connections / (Math.max(ms, 1) / 1000))),
        delivery: b.delivery,
        gateway_peak_in_flight: gateway.state.peak,
        process_peak_rss_mb: hwm === null ? null : round1(hwm),
        verify,
      }
    } finally {
      await server.stop()
    }
  } finally {
    gateway.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

export function printProviderRun(r: ProviderRun, connections: number): void {
  const ms = (us: number) => (us >= 1e6 ? `${(us / 1e6).toFixed(2)} s` : `${Math.round(us / 1000)} ms`)
  const statuses = Object.entries(r.statuses)
    .map(([s, n]) => `${s}: ${n}`)
    .join(', ')
  const settings = [
    ...(r.provider_timeout_ms === null ? [] : [`timeout_ms = ${r.provider_timeout_ms}`]),
    ...Object.entries(r.delivery).map(([k, v]) => `${k} = ${v}`),
  ]
  console.log(`providers answering after ${r.latencies_ms.join(', ')} ms${settings.map((x) => `, ${x}`).join('')}; ${connections} connections`)
  // A refused send (503) is answered too: sends/s counts the 200s only.
  const sent = Math.round((r.statuses['200'] ?? 0) / (r.duration_us / 1e6))
  const bounds = r.littles_law_bound_rps.map((b, i) => `${b} at ${r.latencies_ms[i]} ms (${Math.round((sent / b) * 100)} % of it)`).join('; ')
  console.log(`  sends/s            ${sent}  (Little's-law bound N / latency: ${bounds})`)
  if (sent !== r.rps) console.log(`  answers/s          ${r.rps}, refusals included`)
  console.log(`  p50 / p99 / max    ${ms(r.p50_us)} / ${ms(r.p99_us)} / ${ms(r.max_us)}`)
  console.log(`  peak RSS           ${r.peak_rss_mb ?? '?'} MB during the run, ${r.process_peak_rss_mb ?? '?'} MB over the whole process`)
  console.log(`  answers            ${statuses}; socket errors ${r.socket_errors}`)
  if (r.verify) {
    const v = r.verify
    console.log(`  verify beside them ${Math.round(v.requests / (v.duration_us / 1e6))}/s, p50 / p99 / max ${ms(v.p50_us)} / ${ms(v.p99_us)} / ${ms(v.max_us)}`)
  }
  console.log(`  gateway            at most ${r.gateway_peak_in_flight} requests held at once`)
  console.log(`  server CPU         ${r.cpu_us_per_req ?? '?'} µs per send; other work on the machine ${r.others_pct ?? '?'} %`)
}
