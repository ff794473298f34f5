/**
 * scripts/console-perf (docs/console.md#performance): fills a SQLite
 * database with N verifications over 30 days across 20 countries
 * (console-fill.ts), then times each console read endpoint's server handler
 * (app.handle on the real plugin over the real server) many times over a mix
 * of periods and accounts, and prints p50/p95 per page, checking p95 against
 * the bound (150 ms). Exits 1 when a page is over it.
 */
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Elysia } from 'elysia'
import { buildServer, type Server } from '../../src/app/index.ts'
import { resolveConfig } from '../../src/app/load-config.ts'
import { consoleReadRoutes } from '../../src/console/read-routes.ts'
import { createLogger } from '../../src/lib/logger.ts'
import type { Delivery } from '../../src/otp/ports/index.ts'
import { COUNTRIES, fillDatabase } from './console-fill.ts'

const { values: opt } = parseArgs({
  options: {
    n: { type: 'string', default: '5000000' },
    days: { type: 'string', default: '30' },
    runs: { type: 'string', default: '10' },
    bound: { type: 'string', default: '150' },
    dir: { type: 'string' },
    keep: { type: 'boolean', default: false },
    out: { type: 'string', default: 'console-perf.json' },
    help: { type: 'boolean', default: false },
  },
})
if (opt.help) {
  console.log(`usage: scripts/console-perf [--n 5000000] [--days 30] [--runs 10] [--bound 150] [--dir DIR [--keep]] [--out console-perf.json]
  Fills DIR/otpd.db (a temp dir by default; an existing filled DIR is reused), then times every console page.`)
  process.exit(0)
}
const N = Number(opt.n)
const log = (line: string) => console.log(line)
const dir = opt.dir ?? mkdtempSync(join(tmpdir(), 'otpd-console-perf-'))
const path = join(dir, 'otpd.db')
const noDelivery: Delivery = { deliver: async () => ({ provider: 'none' }) }
const config = resolveConfig(
  {
    database: { path },
    server: { secret: 'console-perf-secret-0123456789-abcdefghijklmnop' },
    retention: { days: 35 },
    fraud: { mode: 'enforce' },
  },
  'console-perf',
  {},
)
const quiet = createLogger({ level: 'error', write: () => {} })
const open = () => buildServer(config, { delivery: noDelivery, logger: quiet, onFatal: (e) => console.error(e) })

const ACCOUNTS = [
  { name: 'default', share: 0.6 },
  { name: 'shop', share: 0.2 },
  { name: 'bank', share: 0.1 },
  { name: 'game', share: 0.07 },
  { name: 'tiny', share: 0.03 },
]

const now = Date.now()
let server: Server = await open()
const filled = ((await server.storage.read((r) => r.rollups.sourceEnd('verifications'))) as number) >= N
if (!filled) {
  log(`fill: ${N} verifications over ${opt.days} days into ${path}`)
  const t0 = performance.now()
  const accounts = []
  const keyIds = new Map<number, number>()
  for (const a of ACCOUNTS) {
    const row = a.name === 'default' ? await server.admin.account('default') : await server.admin.createAccount(a.name)
    keyIds.set(row.id, (await server.admin.createKey({ account: a.name })).id)
    accounts.push({ id: row.id, name: a.name, share: a.share })
  }
  const endpoint = await server.webhooks.add({ url: 'http://127.0.0.1:9/hook', account: 'shop' })
  const hasher = server.hasher
  await server.shutdown()
  const db = new Database(path)
  const shop = accounts.find((a) => a.name === 'shop')!.id
  const r = await fillDatabase(db, { n: N, days: Number(opt.days), now, accounts, keyIds, hookAccount: shop, endpointId: Number(endpoint.id), hasher, log })
  db.run('PRAGMA wal_checkpoint(TRUNCATE)')
  db.run('ANALYZE')
  db.close()
  log(`fill done in ${Math.round((performance.now() - t0) / 1000)} s: ${r.events} events, ${r.ledger} ledger rows, ${r.deliveries} webhook deliveries`)
  server = await open()
}
const mb = Math.round(statSync(path).size / 1e6)
log(`database: ${mb} MB`)

const app = new Elysia().use(consoleReadRoutes(server.consoleRead))
const sample = new Database(path, { readonly: true })
const someIds = (sample.query('SELECT id FROM verifications WHERE seq % 25013 = 7 LIMIT 200').all() as { id: string }[]).map((x) => x.id)
sample.close()

async function timed(url: string): Promise<{ ms: number; status: number; body: Record<string, unknown> }> {
  const t = performance.now()
  const res = await app.handle(new Request(`http://localhost${url}`))
  const text = await res.text()
  return { ms: performance.now() - t, status: res.status, body: JSON.parse(text) }
}

const PERIODS = ['1h', '24h', '7d', '30d']
const ACCOUNT_MIX = ['', '&account=shop', '&account=tiny']
const pages: Record<string, () => string[]> = {
  overview: () => PERIODS.flatMap((p) => ACCOUNT_MIX.map((a) => `/console/api/overview?period=${p}${a}`)),
  // By recipient the search is a POST, 30 an hour per operator (docs/console.md#lists): not timed here.
  'verifications (search)': () =>
    PERIODS.flatMap((p) =>
      ACCOUNT_MIX.flatMap((a) => [
        `/console/api/verifications?period=${p}${a}`,
        `/console/api/verifications?period=${p}${a}&country=${COUNTRIES[(p.length * 7) % 20]![0]}`,
        `/console/api/verifications?period=${p}${a}&status=failed`,
        `/console/api/verifications?period=${p}${a}&id=${someIds[p.length]}`,
      ]),
    ),
  'verification (detail)': () => someIds.slice(0, 40).map((id) => `/console/api/verifications/${id}`),
  fraud: () => PERIODS.flatMap((p) => ACCOUNT_MIX.map((a) => `/console/api/fraud?period=${p}${a}`)),
  workflows: () => PERIODS.flatMap((p) => ACCOUNT_MIX.map((a) => `/console/api/workflows?period=${p}${a}`)),
  webhooks: () => PERIODS.flatMap((p) => ACCOUNT_MIX.map((a) => `/console/api/webhooks?period=${p}${a}`)),
  system: () => Array.from({ length: 12 }, () => '/console/api/system'),
}

const bound = Number(opt.bound)
const results: { page: string; n: number; p50: number; p95: number; max: number; ok: boolean }[] = []
const q = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.ceil(p * xs.length) - 1)]!
for (const [page, urls] of Object.entries(pages)) {
  const samples: number[] = []
  const list = urls()
  for (const url of list) {
    const first = await timed(url)
    if (first.status !== 200) throw new Error(`${url}: ${first.status} ${JSON.stringify(first.body)}`)
    // The search's next page too: a cursor continues where the first stopped.
    const next = (first.body as { next?: string | null }).next
    if (page.startsWith('verifications') && next && !url.includes('cursor=')) list.push(`${url}&cursor=${next}`)
    for (let i = 0; i < Number(opt.runs); i++) samples.push((await timed(url)).ms)
  }
  samples.sort((a, b) => a - b)
  const r = { page, n: samples.length, p50: q(samples, 0.5), p95: q(samples, 0.95), max: samples.at(-1)!, ok: q(samples, 0.95) <= bound }
  results.push(r)
  log(
    `${page.padEnd(24)} n=${String(r.n).padStart(4)}  p50 ${r.p50.toFixed(1).padStart(6)} ms  p95 ${r.p95.toFixed(1).padStart(6)} ms  max ${r.max.toFixed(1).padStart(6)} ms  ${r.ok ? 'ok' : `OVER ${bound} ms`}`,
  )
}
writeFileSync(opt.out, `${JSON.stringify({ n: N, days: Number(opt.days), database_mb: mb, bound_ms: bound, pages: results }, null, 2)}\n`)
await server.shutdown()
if (!opt.dir && !opt.keep) rmSync(dir, { recursive: true, force: true })
process.exit(results.every((r) => r.ok) ? 0 : 1)
