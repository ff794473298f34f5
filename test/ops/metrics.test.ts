/** GET /metrics: Prometheus text format, who may read it, and what it counts. */
import { expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildServer } from '../../src/app/index.ts'
import { resolveConfig } from '../../src/config/load.ts'
import { ManualClock } from '../../src/lib/clock.ts'
import { createMemoryLogger } from '../../src/lib/logger.ts'
import { Counter, Gauge, Histogram, Registry } from '../../src/lib/prometheus.ts'
import { harnessPerTest, ON_PG, TEST, testDatabase, testSqliteOnly, type Harness } from '../kit/harness.ts'

let h: Harness
const start = harnessPerTest()

const TOKEN = 'metrics-token-0123456789abcdef0123456789'

interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/** Parses the exposition text strictly: every line is HELP, TYPE or a sample of a declared metric. */
function parse(text: string): { samples: Sample[]; types: Map<string, string> } {
  expect(text.endsWith('\n')).toBe(true)
  const types = new Map<string, string>()
  const samples: Sample[] = []
  for (const line of text.trimEnd().split('\n')) {
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line)
    if (meta) {
      if (meta[1] === 'TYPE') types.set(meta[2]!, meta[3]!)
      continue
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\})? (\S+)$/.exec(line)
    if (!m) throw new Error(`not an exposition line: ${JSON.stringify(line)}`)
    const labels: Record<string, string> = {}
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))
    }
    const family = m[1]!.replace(/_(bucket|sum|count)$/, '')
    expect(types.has(m[1]!) || types.get(family) === 'histogram').toBe(true)
    samples.push({ name: m[1]!, labels, value: m[3] === '+Inf' ? Infinity : Number(m[3]) })
  }
  return { samples, types }
}

function value(samples: Sample[], name: string, labels: Record<string, string>): number | undefined {
  return samples.find(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v) && Object.keys(s.labels).length === Object.keys(labels).length,
  )?.value
}

const scrape = async (headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) => {
  const res = await h.server.http.handle(new Request('http://localhost/metrics', { headers }))
  return { status: res.status, headers: res.headers, text: await res.text() }
}

test('label values and help texts are escaped; histograms are cumulative with +Inf, _sum and _count', () => {
  const r = new Registry()
  r.add(new Counter('t_total', 'Help with \\ and\nnewline.', ['name'])).inc({ name: 'a "quoted" \\ back\nslash' })
  r.add(new Gauge('t_gauge', 'g', () => [{ value: 2.5 }]))
  const hist = r.add(new Histogram('t_seconds', 'h', ['p'], [0.1, 1]))
  hist.observe({ p: 'x' }, 0.05)
  hist.observe({ p: 'x' }, 0.5)
  hist.observe({ p: 'x' }, 5)
  const text = r.render()
  expect(text).toContain('# HELP t_total Help with \\\\ and\\nnewline.\n')
  expect(text).toContain('t_total{name="a \\"quoted\\" \\\\ back\\nslash"} 1\n')
  expect(text).toContain('t_gauge 2.5\n')
  expect(text).toContain(
    't_seconds_bucket{p="x",le="0.1"} 1\nt_seconds_bucket{p="x",le="1"} 2\nt_seconds_bucket{p="x",le="+Inf"} 3\nt_seconds_sum{p="x"} 5.55\nt_seconds_count{p="x"} 3\n',
  )
  const { samples } = parse(text)
  expect(value(samples, 't_total', { name: 'a "quoted" \\ back\nslash' })).toBe(1)
})

test('label sets that would run together stay separate series; a value on a bucket bound counts in it', () => {
  const r = new Registry()
  const c = r.add(new Counter('t_total', 'h', ['a', 'b']))
  c.inc({ a: '1:', b: '' })
  c.inc({ a: '', b: '1:' })
  c.inc({ a: '1', b: ':' }, 2)
  c.inc({ b: ':', a: '1' }) // label order does not matter
  expect(c.value({ a: '1:', b: '' })).toBe(1)
  expect(c.value({ a: '', b: '1:' })).toBe(1)
  expect(c.value({ a: '1', b: ':' })).toBe(3)
  const hist = r.add(new Histogram('t_seconds', 'h', [], [0.1, 1, 10]))
  for (const v of [0.1, 1, 1.5, 10, 11]) hist.observe({}, v)
  const text = r.render()
  expect(text).toContain('t_seconds_bucket{le="0.1"} 1\nt_seconds_bucket{le="1"} 2\nt_seconds_bucket{le="10"} 4\nt_seconds_bucket{le="+Inf"} 5\n')
  expect(() => new Histogram('t_bad', 'h', [], [1, 0.5])).toThrow('buckets must be in increasing order')
})

test('without admin listener or token, /metrics on the main listener is a 404 like any unknown path', async () => {
  h = await start()
  const r = await h.call('/metrics', undefined, { method: 'GET', key: null })
  const unknown = await h.call('/nothing-here', undefined, { method: 'GET', key: null })
  expect(r.status).toBe(404)
  expect(r.json).toEqual({ error: 'Not found', request_id: r.json.request_id })
  expect(Object.keys(unknown.json)).toEqual(Object.keys(r.json))
})

test('with server.metrics_token: no token 401, a wrong one 401, the right one 200; the token is never echoed or logged', async () => {
  h = await start({ config: { server: { metrics_token: TOKEN } } })
  const none = await scrape({})
  expect(none.status).toBe(401)
  expect(JSON.parse(none.text).error).toBe('Metrics token is required. Provide it via Authorization: Bearer <token>')
  expect(none.headers.get('www-authenticate')).toBe('Bearer realm="otpd metrics"')
  for (const wrong of [TOKEN.slice(0, -1), TOKEN + 'x', 'short', h.key]) {
    const r = await scrape({ authorization: `Bearer ${wrong}` })
    expect(r.status).toBe(401)
    expect(JSON.parse(r.text)).toEqual({ error: 'Invalid metrics token', request_id: r.headers.get('x-request-id') })
  }
  // An API key is not a metrics token, and x-api-key does not open /metrics.
  expect((await scrape({ 'x-api-key': TOKEN })).status).toBe(401)
  const ok = await scrape()
  expect(ok.status).toBe(200)
  expect(ok.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
  parse(ok.text)
  expect(h.logs.join('\n')).not.toContain(TOKEN)
  expect(ok.text).not.toContain(TOKEN)
})

test('requests, sends, verifies, rate-limit rejections and credit balances are counted', async () => {
  h = await start({
    credits: 2,
    config: { server: { metrics_token: TOKEN }, limits: { recipient_per_minute: 1, recipient_failures_per_day: 3, key_requests_per_minute: 30 } },
  })
  await h.server.admin.createAccount('acme')
  await h.server.admin.addCredits(7, 'acme')

  const real = await h.send({ channel: 'sms', recipient: '+14155550123' }) // sent via the recording provider
  expect((await h.send({ channel: 'sms', recipient: '+14155550123' })).status).toBe(429) // per recipient
  h.delivery.fail = true
  expect((await h.send({ channel: 'email', recipient: 'ann@example.com' })).status).toBe(500) // delivery failed
  h.delivery.fail = false
  const voice = await h.send({ channel: 'voice', recipient: '+14155550124' }) // the last credit
  expect((await h.send({ channel: 'sms', recipient: '+14155550125' })).status).toBe(402)
  const test1 = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  expect((await h.send({ channel: 'fax', recipient: 'x' })).status).toBe(400)

  await h.verify({ verification_id: real.json.verification_id, code: h.delivery.sent[0]!.text.slice(-6) })
  for (let i = 0; i < 5; i++) await h.verify({ verification_id: test1.json.verification_id, code: '000000' })
  expect((await h.verify({ verification_id: test1.json.verification_id, code: '123456' })).status).toBe(429) // lockout
  // The failure cap (not for test recipients, docs/api.md#test-recipients): the 3rd failure of a real recipient fills it.
  for (let i = 0; i < 3; i++) await h.verify({ verification_id: voice.json.verification_id, code: '000000' })
  expect((await h.verify({ verification_id: voice.json.verification_id, code: '123456' })).status).toBe(429) // failure cap
  await h.verify({ verification_id: '00000000-0000-4000-8000-000000000000', code: '123456' }) // 404

  const { samples, types } = parse((await scrape()).text)
  expect(types.get('otpd_http_requests_total')).toBe('counter')
  expect(value(samples, 'otpd_http_requests_total', { route: '/api/v1/send', status: '200' })).toBe(4)
  expect(value(samples, 'otpd_http_requests_total', { route: '/api/v1/send', status: '429' })).toBe(1)
  expect(value(samples, 'otpd_http_requests_total', { route: '/api/v1/send', status: '400' })).toBe(1)
  expect(value(samples, 'otpd_http_requests_total', { route: '/api/v1/verify', status: '404' })).toBe(1)

  expect(value(samples, 'otpd_sends_total', { channel: 'sms', provider: 'recording', outcome: 'sent' })).toBe(1)
  expect(value(samples, 'otpd_sends_total', { channel: 'voice', provider: 'recording', outcome: 'sent' })).toBe(1)
  expect(value(samples, 'otpd_sends_total', { channel: 'email', provider: 'none', outcome: 'failed' })).toBe(1)
  expect(value(samples, 'otpd_sends_total', { channel: 'sms', provider: 'none', outcome: 'rate_limited' })).toBe(1)
  expect(value(samples, 'otpd_sends_total', { channel: 'sms', provider: 'none', outcome: 'no_credits' })).toBe(1)
  expect(value(samples, 'otpd_sends_total', { channel: 'sms', provider: 'none', outcome: 'test' })).toBe(2)

  expect(value(samples, 'otpd_verifies_total', { result: 'verified' })).toBe(1)
  expect(value(samples, 'otpd_verifies_total', { result: 'invalid_code' })).toBe(8)
  expect(value(samples, 'otpd_verifies_total', { result: 'locked' })).toBe(2)
  expect(value(samples, 'otpd_verifies_total', { result: 'not_found' })).toBe(1)
  expect(value(samples, 'otpd_verifies_total', { result: 'expired' })).toBe(0)

  expect(value(samples, 'otpd_rate_limited_total', { kind: 'recipient' })).toBe(1)
  expect(value(samples, 'otpd_rate_limited_total', { kind: 'lockout' })).toBe(1)
  expect(value(samples, 'otpd_rate_limited_total', { kind: 'recipient_failures' })).toBe(1)
  expect(value(samples, 'otpd_rate_limited_total', { kind: 'key' })).toBe(0)

  expect(value(samples, 'otpd_credit_balance', { account: 'default' })).toBe(0)
  expect(value(samples, 'otpd_credit_balance', { account: 'acme' })).toBe(7)
  // The file sizes are SQLite's: PostgreSQL has no database file of otpd's to measure (its own monitoring covers it).
  if (!ON_PG) {
    expect(value(samples, 'otpd_database_size_bytes', { file: 'database' })).toBeGreaterThan(0)
    expect(value(samples, 'otpd_database_size_bytes', { file: 'wal' })).toBeGreaterThan(0)
  } else expect(samples.some((s) => s.name === 'otpd_database_size_bytes')).toBe(false)
  expect(types.get('otpd_http_request_duration_seconds')).toBe('histogram')
})

test('the request duration histogram resolves answers below 5 ms: bounds from 0.5 ms, cumulative, one count per request', async () => {
  h = await start({ config: { server: { metrics_token: TOKEN } } })
  const route = { route: '/api/v1/verify' }
  for (let i = 0; i < 3; i++) await h.verify({ verification_id: '00000000-0000-4000-8000-000000000000', code: '123456' })
  const { samples } = parse((await scrape()).text)
  const bounds = samples.filter((s) => s.name === 'otpd_http_request_duration_seconds_bucket' && s.labels.route === route.route).map((s) => s.labels.le)
  expect(bounds).toEqual(['0.0005', '0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '30', '+Inf'])
  const counts = bounds.map((le) => value(samples, 'otpd_http_request_duration_seconds_bucket', { ...route, le: le! })!)
  expect(counts).toEqual([...counts].sort((a, b) => a - b))
  expect(counts.at(-1)).toBe(3)
  expect(value(samples, 'otpd_http_request_duration_seconds_count', route)).toBe(3)
  // Each of these in-process answers took well under a second; the 1 s bucket holds all three.
  expect(value(samples, 'otpd_http_request_duration_seconds_bucket', { ...route, le: '1' })).toBe(3)
})

test('per-key rate-limit rejections are counted by kind', async () => {
  h = await start({ config: { server: { metrics_token: TOKEN }, limits: { key_requests_per_minute: 1 } } })
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  await h.verify({ verification_id: 'x', code: '123456' })
  const { samples } = parse((await scrape()).text)
  expect(value(samples, 'otpd_rate_limited_total', { kind: 'key' })).toBe(2)
  expect(value(samples, 'otpd_http_requests_total', { route: '/api/v1/verify', status: '429' })).toBe(1)
})

test('provider attempts feed a latency histogram per channel and provider (router onAttempt hook)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'otpd-metrics-'))
  const config = resolveConfig({
    ...(await testDatabase(dir)),
    channels: { sms: ['fast'] },
    providers: { fast: { type: 'noop' } },
  })
  const server = await buildServer(config, { clock: new ManualClock(Date.UTC(2026, 0, 1)), logger: createMemoryLogger() })
  try {
    const key = (await server.admin.createKey({ name: 't' })).key
    await server.admin.addCredits(3)
    for (const recipient of ['+14155550100', '+14155550101', '+14155550102']) {
      const res = await server.http.handle(
        new Request('http://localhost/api/v1/send', {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ channel: 'sms', recipient }),
        }),
      )
      expect(res.status).toBe(200)
    }
    const { samples, types } = parse(await (await server.adminHttp.handle(new Request('http://localhost/metrics'))).text())
    expect(types.get('otpd_provider_latency_seconds')).toBe('histogram')
    const labels = { channel: 'sms', provider: 'fast' }
    expect(value(samples, 'otpd_provider_latency_seconds_count', labels)).toBe(3)
    expect(value(samples, 'otpd_provider_latency_seconds_bucket', { ...labels, le: '+Inf' })).toBe(3)
    expect(value(samples, 'otpd_provider_latency_seconds_bucket', { ...labels, le: '30' })).toBe(3)
    expect(value(samples, 'otpd_provider_latency_seconds_sum', labels)).toBeGreaterThanOrEqual(0)
    const buckets = samples.filter((s) => s.name === 'otpd_provider_latency_seconds_bucket').map((s) => s.value)
    expect(buckets).toEqual([...buckets].sort((a, b) => a - b)) // cumulative
    expect(value(samples, 'otpd_provider_attempts_total', { ...labels, outcome: 'accepted' })).toBe(3)
    expect(value(samples, 'otpd_sends_total', { channel: 'sms', provider: 'fast', outcome: 'sent' })).toBe(3)
  } finally {
    server.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('the admin app serves /metrics without a token, health and readiness, and nothing of the API', async () => {
  h = await start()
  const get = (path: string, method = 'GET') => h.server.adminHttp.handle(new Request(`http://localhost${path}`, { method }))
  expect((await get('/metrics')).status).toBe(200)
  expect((await get('/healthz')).status).toBe(200)
  expect((await get('/readyz')).status).toBe(200)
  expect((await get('/api/v1/send', 'POST')).status).toBe(404)
  expect((await get('/metrics', 'POST')).status).toBe(405)
  // Scrapes of the admin listener are not counted as API requests.
  const { samples } = parse(await (await get('/metrics')).text())
  expect(samples.filter((s) => s.name === 'otpd_http_requests_total')).toEqual([])
})

testSqliteOnly(
  'with synchronous = FULL and the WAL workers (serve), each WAL flush is timed in otpd_wal_flush_seconds; NORMAL has no flushes to time',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'otpd-metrics-'))
    const flushSamples = async (synchronous: 'FULL' | 'NORMAL') => {
      const config = resolveConfig({
        database: { path: `${dir}/${synchronous}.db`, synchronous },
        channels: { sms: ['fast'] },
        providers: { fast: { type: 'noop' } },
      })
      const server = await buildServer(config, { clock: new ManualClock(Date.UTC(2026, 0, 1)), logger: createMemoryLogger(), background: true })
      try {
        const key = (await server.admin.createKey({ name: 't' })).key
        await server.admin.addCredits(5)
        for (let i = 0; i < 5; i++) {
          const res = await server.http.handle(
            new Request('http://localhost/api/v1/send', {
              method: 'POST',
              headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
              body: JSON.stringify({ channel: 'sms', recipient: `+1415555010${i}` }),
            }),
          )
          expect(res.status).toBe(200)
        }
        return parse(await (await server.adminHttp.handle(new Request('http://localhost/metrics'))).text())
      } finally {
        await server.shutdown()
      }
    }
    try {
      const full = await flushSamples('FULL')
      expect(full.types.get('otpd_wal_flush_seconds')).toBe('histogram')
      // Each send was answered after a flush of its own (they were made one after another).
      const count = value(full.samples, 'otpd_wal_flush_seconds_count', {})!
      expect(count).toBeGreaterThanOrEqual(5)
      expect(value(full.samples, 'otpd_wal_flush_seconds_bucket', { le: '+Inf' })).toBe(count)
      expect(value(full.samples, 'otpd_wal_flush_seconds_sum', {})).toBeGreaterThan(0)
      const buckets = full.samples.filter((s) => s.name === 'otpd_wal_flush_seconds_bucket').map((s) => s.value)
      expect(buckets).toEqual([...buckets].sort((a, b) => a - b))
      const normal = await flushSamples('NORMAL')
      expect(normal.samples.filter((s) => s.name.startsWith('otpd_wal_flush_seconds'))).toEqual([])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  },
)
