/**
 * The ceiling on queued events (docs/events.md#a-ceiling-on-queued-events)
 * against the compiled server: its one endpoint never answers, so sends fill
 * the outbox to `events.max_queued`; then a flood of sends, for `--seconds=`
 * with `--connections=` at once, must all be answered the documented 503 at
 * once, charge nothing, and leave the server's RSS flat.
 *
 * Usage: bun scripts/proofs/outbox-ceiling.ts [--seconds=10] [--connections=50] [--max-queued=200]
 */
import { rssMb } from '../perf/bench-proc.ts'
import { cli, cliJson, makeEnv, numberArg, post, report, sleep, startServer, unthrottledNoop } from '../kit/otpd.ts'

const QUEUED = 'Too many webhook events waiting for delivery. Please try again in 5 seconds.'
const seconds = numberArg('seconds', 10)
const connections = numberArg('connections', 50)
const maxQueued = numberArg('max-queued', 200)
const violations: string[] = []

// An endpoint that takes every request and never answers.
const hanging = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 0, fetch: () => new Promise<Response>(() => {}) })
const env = makeEnv('outbox-ceiling', `${unthrottledNoop()}\n[events]\nmax_queued = ${maxQueued}\n`)
const key = cliJson(env, 'keys', 'create', '--init').key as string
cliJson(env, 'credits', 'add', '1000000')
const added = cli(env, 'webhooks', 'add', '--url', `http://127.0.0.1:${hanging.port}/hook`)
if (added.code !== 0) throw new Error(`webhooks add failed: ${added.stderr}`)
const server = await startServer(env)
const balance = () => cliJson(env, 'credits', 'balance').balance as number

let n = 0
const send = () => post(server.url, '/api/v1/send', key, { channel: 'sms', recipient: `+1415${String(5_000_000 + n++).padStart(7, '0')}` })

// Fill: sends until the loop's count (at most a second old) refuses them.
let accepted = 0
for (let refused = false; !refused; ) {
  const r = await send()
  if (r.status === 200) accepted++
  else if (r.status === 503 && r.json.error === QUEUED) refused = true
  else throw new Error(`fill: ${r.status} ${JSON.stringify(r.json)}`)
  if (accepted > maxQueued * 10) throw new Error('the ceiling never refused')
}
const before = balance()
const rssStart = rssMb(server.proc.pid, 'VmRSS') ?? 0
const rss: number[] = []
const sampler = setInterval(() => rss.push(rssMb(server.proc.pid, 'VmRSS') ?? 0), 500)
const latencies: number[] = []
const others: string[] = []
const until = performance.now() + seconds * 1000
await Promise.all(
  Array.from({ length: connections }, async () => {
    while (performance.now() < until) {
      const t = performance.now()
      const r = await send()
      latencies.push(performance.now() - t)
      if (r.status !== 503 || r.json.error !== QUEUED || r.json.retry_after !== 5) others.push(`${r.status} ${r.json.error ?? ''}`)
    }
  }),
)
clearInterval(sampler)
await sleep(500)
const after = balance()
latencies.sort((a, b) => a - b)
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!.toFixed(1)
const rssEnd = rssMb(server.proc.pid, 'VmRSS') ?? 0
const rssMax = Math.max(rssStart, ...rss)
// Flat: the flood's second half holds no more than its first (no growth per refusal).
const half = Math.floor(rss.length / 2)
const [firstHalf, secondHalf] = [Math.max(...rss.slice(0, half)), Math.max(...rss.slice(half))]
if (others.length > 0) violations.push(`${others.length} answers other than the 503 (first: ${others[0]})`)
if (after !== before) violations.push(`balance moved from ${before} to ${after} during the flood`)
if (secondHalf > firstHalf + 16) violations.push(`RSS grew from ${firstHalf.toFixed(0)} MB (first half) to ${secondHalf.toFixed(0)} MB (second half)`)
server.proc.kill('SIGKILL')
void hanging.stop(true)
env.close()
report(
  'outbox ceiling',
  {
    max_queued: maxQueued,
    'sends accepted before the refusal': accepted,
    'refused sends': latencies.length,
    'refusals/s': Math.round(latencies.length / seconds),
    'p50 ms': pct(50),
    'p99 ms': pct(99),
    'balance before/after': `${before}/${after}`,
    'RSS MB start/max/end': `${rssStart.toFixed(0)}/${rssMax.toFixed(0)}/${rssEnd.toFixed(0)}`,
    'RSS MB max, 1st/2nd half': `${firstHalf.toFixed(0)}/${secondHalf.toFixed(0)}`,
  },
  violations,
)
