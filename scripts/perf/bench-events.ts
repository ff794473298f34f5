/**
 * `scripts/bench --endpoint-latency MS` (docs/benchmarks.md#slow-webhook-endpoints):
 * otpd's event delivery to slow endpoints. Each of `--event-accounts` accounts
 * has one webhook endpoint on a loopback server of this process that answers
 * after MS ms (`never`: it never answers, and otpd gives up after its 10 s),
 * and emits `--event-rate` events a second (sends to a test recipient: a
 * `verification.sent` each, no provider, no credit). One more account has an
 * endpoint that answers at once and emits 10 events a second: its latency is
 * what the slow ones cost the others. Prints the events delivered a second
 * to the slow endpoints, each side's delivery latency (from the event's
 * `occurred_at` to its arrival) p50 and p99, the Little's-law bound
 * (slots ÷ latency) and otpd's RSS.
 */
import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { benchConfig, initArgs, otpdCli } from './bench-otpd.ts'
import { round1, rssMb, startServer } from './bench-proc.ts'

export interface EventBenchSettings {
  binary: string
  scratch: string
  metricsToken: string
  serverCpus: string | undefined
  /** null: the slow endpoints never answer. */
  latencyMs: number | null
  accounts: number
  /** Events a second each slow account emits. */
  rate: number
  durationS: number
}

/** The defaults of `[events]` (docs/configuration.md#events): the bound's slots. */
const MAX_IN_FLIGHT = 256
const ENDPOINT_MAX_IN_FLIGHT = 64
const OTHER_RATE = 10
const TEST_RECIPIENT = '+15550100001'

interface Side {
  /** Delivery latencies (ms) of the events that arrived in the measured window, first arrival of each. */
  latencies: number[]
  seen: Set<string>
}

const side = (): Side => ({ latencies: [], seen: new Set() })

/** Takes a delivery: its latency, once per event id, while `measuring`. */
function take(s: Side, body: string, measuring: boolean): void {
  const e = JSON.parse(body) as { id: string; occurred_at: string }
  if (s.seen.has(e.id)) return
  s.seen.add(e.id)
  if (measuring) s.latencies.push(Date.now() - Date.parse(e.occurred_at))
}

function pct(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

/** Sends to a test recipient with `key`, `rate` a second, until `until` (performance.now()); the count of answers other than 200. */
async function emit(url: string, key: string, rate: number, until: number): Promise<number> {
  const t0 = performance.now()
  let errors = 0
  const inFlight: Promise<void>[] = []
  for (let k = 0; ; k++) {
    const at = t0 + (k * 1000) / rate
    if (at >= until) break
    const wait = at - performance.now()
    if (wait > 0) await Bun.sleep(wait)
    inFlight.push(
      fetch(`${url}/api/v1/send`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ channel: 'sms', recipient: TEST_RECIPIENT }),
      }).then(
        async (r) => {
          await r.arrayBuffer()
          if (r.status !== 200) errors++
        },
        () => void errors++,
      ),
    )
  }
  await Promise.all(inFlight)
  return errors
}

export async function benchEvents(s: EventBenchSettings, log: (line: string) => void): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(s.scratch, 'events-'))
  const configFile = benchConfig(dir, 'FULL', s.metricsToken, s.binary)
  const slow = side()
  const other = side()
  let measuring = false
  let release!: () => void
  const never = new Promise<void>((r) => (release = r))
  const receivers = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 255,
    async fetch(req) {
      const body = await req.text()
      if (new URL(req.url).pathname === '/other') take(other, body, measuring)
      else {
        await (s.latencyMs === null ? never : Bun.sleep(s.latencyMs))
        take(slow, body, measuring)
      }
      return new Response(null, { status: 204 })
    },
  })
  const base = `http://127.0.0.1:${receivers.port}`
  const keyOf = (account: string, url: string) => {
    otpdCli(s.binary, ['accounts', 'create', ...initArgs(s.binary), account], configFile, dir)
    otpdCli(s.binary, ['webhooks', 'add', '--url', url, '--account', account], configFile, dir)
    return JSON.parse(otpdCli(s.binary, ['keys', 'create', '--name', 'bench', '--account', account, '--json'], configFile, dir)).key as string
  }
  const slowKeys = Array.from({ length: s.accounts }, (_, i) => keyOf(`slow-${i}`, `${base}/slow/${i}`))
  const otherKey = keyOf('other', `${base}/other`)
  const server = await startServer([s.binary, 'serve', '--listen', '127.0.0.1:0', '--config', configFile], {}, dir, s.serverCpus)
  try {
    log(
      `events: ${s.accounts} slow endpoint(s) answering ${s.latencyMs === null ? 'never' : `after ${s.latencyMs} ms`}, ${s.rate} events/s each, for ${s.durationS} s`,
    )
    measuring = true
    const until = performance.now() + s.durationS * 1000
    const errors = await Promise.all([...slowKeys.map((k) => emit(server.url, k, s.rate, until)), emit(server.url, otherKey, OTHER_RATE, until)])
    measuring = false
    const rss = rssMb(server.pid, 'VmRSS')
    const peak = rssMb(server.pid, 'VmHWM')
    const show = (x: Side) => {
      const sorted = [...x.latencies].sort((a, b) => a - b)
      return { delivered: sorted.length, p50_ms: pct(sorted, 50), p99_ms: pct(sorted, 99) }
    }
    const slots = Math.min(s.accounts * ENDPOINT_MAX_IN_FLIGHT, MAX_IN_FLIGHT)
    return {
      endpoint_latency_ms: s.latencyMs ?? 'never',
      accounts: s.accounts,
      rate_per_account: s.rate,
      duration_s: s.durationS,
      emitted_per_s: s.accounts * s.rate + OTHER_RATE,
      send_errors: errors.reduce((a, b) => a + b, 0),
      slow: { ...show(slow), events_per_s: round1(slow.latencies.length / s.durationS) },
      other: show(other),
      littles_law_events_per_s: s.latencyMs === null || s.latencyMs === 0 ? null : round1(slots / (s.latencyMs / 1000)),
      rss_mb: rss === null ? null : round1(rss),
      peak_rss_mb: peak === null ? null : round1(peak),
      errors_logged: server.errorLines(),
    }
  } finally {
    release()
    await server.stop()
    receivers.stop(true)
  }
}

export function printEvents(r: Record<string, any>): void {
  const ms = (v: number | null) => (v === null ? '-' : `${v} ms`)
  console.log(
    `endpoints answering ${r.endpoint_latency_ms === 'never' ? 'never' : `after ${r.endpoint_latency_ms} ms`}: ${r.accounts} account(s) x ${r.rate_per_account} events/s, another account 10 events/s to an endpoint that answers at once; ${r.duration_s} s`,
  )
  console.log(
    `  slow endpoints : ${r.slow.events_per_s} events/s delivered (${r.slow.delivered}), latency p50 ${ms(r.slow.p50_ms)}, p99 ${ms(r.slow.p99_ms)}; Little's law bound ${r.littles_law_events_per_s ?? '-'} events/s`,
  )
  console.log(`  other account  : ${r.other.delivered} delivered, latency p50 ${ms(r.other.p50_ms)}, p99 ${ms(r.other.p99_ms)}`)
  console.log(`  otpd RSS       : ${r.rss_mb} MB at the end, ${r.peak_rss_mb} MB peak; send errors ${r.send_errors}, error lines logged ${r.errors_logged}`)
}
