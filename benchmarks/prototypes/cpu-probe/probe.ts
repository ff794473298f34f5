/**
 * In-process CPU probe (BENCHMARKS.md, tenth round): the real app on a
 * temporary database (NORMAL, WAL work on its worker threads as `serve` has
 * it), driven through `app.handle` in batches of 32 concurrent requests, the
 * bench's mixes. Prints the request thread's CPU per request (thread CPU
 * time, the probe's own Request building subtracted) and the share spent in
 * group-commit batches. No sockets, so no kernel TCP and no HTTP parsing:
 * what is left is otpd's JavaScript, Elysia, SQLite and the WAL writes.
 *
 *   bun benchmarks/prototypes/cpu-probe/probe.ts verify|send [variant]
 *
 * Variants replace one layer at a time, to see what it costs (never correct
 * behaviour, only for measuring):
 *   full         nothing replaced
 *   stmts        also time every SQLite statement (adds its own overhead)
 *   stubverify   verify answers invalid_code at once: HTTP layer only
 *   stubgrouped  ... through an empty grouped transaction
 *   stubhit      ... that records the key hit
 *   nolog        no request log line
 *   nofail       no per-recipient failure log
 */
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildServer } from '../../../src/app.ts'
import { resolveConfig } from '../../../src/config/load.ts'
import { createLogger } from '../../../src/lib/logger.ts'
import { VerifyService } from '../../../src/otp/verify.ts'
import { RecipientFailureLog } from '../../../src/store/event-logs.ts'
import { SqliteTransactor } from '../../../src/store/transactor.ts'

const endpoint = process.argv[2] === 'send' ? 'send' : 'verify'
const variant = process.argv[3] ?? 'full'
const BATCH = 32
const ROUNDS = 7
const BATCHES = 300
const patch = (proto: object, name: string, fn: unknown) => Object.defineProperty(proto, name, { value: fn, writable: true, configurable: true })

// Statement timing: wraps every statement prepared from here on.
const stmtNs = new Map<string, [number, number]>()
let measuring = false
if (variant === 'stmts') {
  const prepare = Database.prototype.prepare
  patch(Database.prototype, 'prepare', function (this: Database, ...args: Parameters<typeof prepare>) {
    const st = prepare.apply(this, args) as unknown as Record<string, (...a: unknown[]) => unknown>
    const sql = String(args[0]).replace(/\s+/g, ' ').slice(0, 90)
    for (const m of ['run', 'get', 'all']) {
      const inner = st[m]!
      st[m] = function (this: unknown, ...a: unknown[]) {
        if (!measuring) return inner.apply(this, a)
        const t = Bun.nanoseconds()
        try {
          return inner.apply(this, a)
        } finally {
          const e = stmtNs.get(sql) ?? [0, 0]
          e[0] += Bun.nanoseconds() - t
          e[1]++
          stmtNs.set(sql, e)
        }
      }
    }
    return st
  })
}
let batchNs = 0
const commitBatch = (SqliteTransactor.prototype as unknown as { commitBatch: (b: unknown) => void }).commitBatch
patch(SqliteTransactor.prototype, 'commitBatch', function (this: unknown, b: unknown) {
  const t = Bun.nanoseconds()
  try {
    return commitBatch.call(this, b)
  } finally {
    batchNs += Bun.nanoseconds() - t
  }
})
type Inner = { d: { tx: SqliteTransactor; limiter: { admit(id: number): unknown } } }
if (variant === 'stubverify') patch(VerifyService.prototype, 'verify', () => Promise.resolve({ kind: 'invalid_code' }))
if (variant === 'stubgrouped') patch(VerifyService.prototype, 'verify', function (this: Inner) { return this.d.tx.grouped(() => ({ kind: 'invalid_code' })) })
if (variant === 'stubhit')
  patch(VerifyService.prototype, 'verify', function (this: Inner, key: { id: number }) {
    return this.d.tx.grouped(() => (this.d.limiter.admit(key.id), { kind: 'invalid_code' }))
  })
if (variant === 'nofail') {
  patch(RecipientFailureLog.prototype, 'record', () => {})
  patch(RecipientFailureLog.prototype, 'nthLatest', () => undefined)
}

const dir = mkdtempSync(join(tmpdir(), 'otpd-probe-'))
const big = 1_000_000_000
const config = resolveConfig(
  {
    database: { path: join(dir, 'otpd.db'), synchronous: 'NORMAL' },
    limits: { key_requests_per_minute: big, recipient_per_minute: big, recipient_per_hour: big, recipient_per_day: big, max_failed_attempts: big, recipient_failures_per_day: big },
    channels: { sms: ['bench'], email: ['bench'], voice: ['bench'] },
    providers: { bench: { type: 'noop' } },
  },
  'probe',
  {},
)
let written = 0
const logger = createLogger({ level: 'info', write: (line) => void (written += line.length) })
if (variant === 'nolog') logger.info = () => {}
const server = buildServer(config, { logger, backgroundCheckpoints: true })
const key = server.admin.createKey({ name: 'probe' }).key
server.admin.addCredits(big)
const app = server.http
const request = (path: string, body: string) =>
  new Request(`http://localhost${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': String(body.length) },
    body,
  })

async function seed(count: number, tag: number): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < count; i += BATCH) {
    const bodies = Array.from({ length: BATCH }, (_, j) => JSON.stringify({ channel: 'sms', recipient: `+1${tag}8${String(i + j).padStart(9, '0')}`, code: '123456', expires_in: 3600 }))
    const rs = await Promise.all(bodies.map((b) => app.handle(request('/api/v1/send', b))))
    for (const r of rs) ids.push(((await r.json()) as { verification_id: string }).verification_id)
  }
  return ids
}
const okIds = await seed(3008, 1)
const wrongIds = await seed(3008, 2)
const pick = (ids: string[]) => ids[(Math.random() * ids.length) | 0]!

let n = 0
/** The bench's mixes (scripts/bench-verify.lua, bench-send.lua). */
function next(): Request {
  n++
  if (endpoint === 'send') return request('/api/v1/send', `{"channel":"sms","recipient":"+17${String(n).padStart(10, '0')}"}`)
  const kind = n % 3
  if (kind === 0) return request('/api/v1/verify', `{"verification_id":"${pick(okIds)}","code":"123456"}`)
  if (kind === 1) return request('/api/v1/verify', `{"verification_id":"${pick(wrongIds)}","code":"000000"}`)
  return request('/api/v1/verify', `{"verification_id":"00000000-0000-4000-8000-${String(n).padStart(12, '0')}","code":"123456"}`)
}

/** Thread CPU per request over `batches` batches; with handle=false, the cost of building and reading the Requests alone. */
async function round(batches: number, handle: boolean): Promise<{ cpu: number; batch: number }> {
  const t0 = process.threadCpuUsage()
  const b0 = batchNs
  for (let b = 0; b < batches; b++) {
    const reqs = Array.from({ length: BATCH }, next)
    if (handle) for (const r of await Promise.all(reqs.map((q) => app.handle(q)))) await r.arrayBuffer()
    else for (const r of reqs) await r.arrayBuffer()
  }
  const t = process.threadCpuUsage(t0)
  return { cpu: (t.user + t.system) / (batches * BATCH), batch: (batchNs - b0) / 1000 / (batches * BATCH) }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
await round(BATCHES, true)
measuring = true
const cpu: number[] = []
const batch: number[] = []
for (let i = 0; i < ROUNDS; i++) {
  const own = (await round(100, false)).cpu
  const r = await round(BATCHES, true)
  cpu.push(r.cpu - own)
  batch.push(r.batch)
}
const f = (x: number) => Math.round(x * 100) / 100
console.log(JSON.stringify({ endpoint, variant, cpu_us: f(median(cpu)), cpu_min: f(Math.min(...cpu)), cpu_max: f(Math.max(...cpu)), batch_us: f(median(batch)) }))
const total = ROUNDS * BATCHES * BATCH
for (const [sql, [ns, calls]] of [...stmtNs].sort((a, b) => b[1][0] - a[1][0])) {
  console.log(`${(ns / 1000 / total).toFixed(2).padStart(6)} us/req ${(calls / total).toFixed(3).padStart(6)} calls/req  ${sql}`)
}
await server.shutdown()
rmSync(dir, { recursive: true, force: true })
process.exit(0)
