/**
 * Test harness: the real app on a temporary SQLite file with migrations, a
 * recording delivery, a manual clock, and a memory logger. Drive it with
 * `call()` (app.handle), or over a real port with `listen()`.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildServer, type Server } from '../src/app.ts'
import { resolveConfig } from '../src/app-config.ts'
import { LISTEN_OPTIONS } from '../src/http/app.ts'
import { ManualClock } from '../src/lib/clock.ts'
import { createMemoryLogger } from '../src/lib/logger.ts'
import type { Delivery } from '../src/otp/ports.ts'
import type { OutboundMessage } from '../src/otp/types.ts'

/** Records every message; `fail` makes the next deliveries throw; `delayMs` holds them. */
export class RecordingDelivery implements Delivery {
  sent: OutboundMessage[] = []
  fail = false
  gate: Promise<void> | null = null
  async deliver(message: OutboundMessage): Promise<{ provider: string }> {
    if (this.gate) await this.gate
    if (this.fail) throw new Error('provider unavailable (test)')
    this.sent.push(message)
    return { provider: 'recording' }
  }
  /** The code in the last message (default template "...: 123456"). */
  lastCode(): string {
    const m = this.sent.at(-1)
    if (!m) throw new Error('nothing was delivered')
    return /(\d{4,10})(?!.*\d)/.exec(m.text)![1]!
  }
}

export interface Harness {
  server: Server
  clock: ManualClock
  delivery: RecordingDelivery
  logs: string[]
  dir: string
  dbPath: string
  /** A fresh active key on the default account. */
  key: string
  call(path: string, body?: unknown, opts?: CallOptions): Promise<Result>
  send(body: Record<string, unknown>, key?: string): Promise<Result>
  verify(body: Record<string, unknown>, key?: string): Promise<Result>
  /** Serves the app on a free loopback port (closed by close()); returns its base URL. */
  listen(): string
  /** Builds a second server on the same database file (a restart). */
  restart(): Promise<Harness>
  close(): void
}

export interface CallOptions {
  method?: string
  key?: string | null
  headers?: Record<string, string>
  /** Raw body text: sent as is instead of JSON.stringify(body). */
  raw?: string | Uint8Array
}

export interface Result {
  status: number
  headers: Headers
  json: Record<string, any>
}

export interface HarnessOptions {
  /** Raw config overrides (same shape as the TOML file). */
  config?: Record<string, any>
  credits?: number
  /** Reuse a directory (restart); otherwise a new temp dir. */
  dir?: string
  clock?: ManualClock
  delivery?: RecordingDelivery
  /** Use this key instead of creating one (restart keeps the original key). */
  key?: string
  /** Remove `dir` on close (set for a restart of a harness that made its own dir). */
  ownsDir?: boolean
  /** Deliver through the providers the config names (real router) instead of recording. */
  configuredDelivery?: boolean
  /** Environment the providers read their secrets from (with configuredDelivery). */
  env?: Record<string, string | undefined>
  /** What a failed flush does (the server's default exits the process). */
  onFatal?: (err: Error) => void
}

export async function createHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'otpd-test-'))
  const ownsDir = opts.ownsDir ?? !opts.dir
  const dbPath = join(dir, 'otpd.db')
  const clock = opts.clock ?? new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0))
  const delivery = opts.delivery ?? new RecordingDelivery()
  const logger = createMemoryLogger()
  const raw = structuredClone(opts.config ?? {})
  // The fraud guard (EXTENSIONS.md section 5) is off unless a test sets [fraud]: the v1
  // tests send many codes to numbers of countries never approved, which it would refuse.
  raw.fraud ??= { mode: 'off' }
  raw.database = { ...(raw.database ?? {}), path: dbPath }
  const env = opts.env ?? {}
  const config = resolveConfig(raw, 'test', env)
  // A failed flush stops the storage; the test process goes on (the server's default exits).
  const onFatal = opts.onFatal ?? ((err: Error) => logger.error('fatal storage failure', { error: err.message }))
  const server = buildServer(config, { clock, delivery: opts.configuredDelivery ? undefined : delivery, logger, env, onFatal })
  const key = opts.key ?? (await server.admin.createKey({ name: 'test' })).key
  if (opts.credits) await server.admin.addCredits(opts.credits)

  const call = async (path: string, body?: unknown, o: CallOptions = {}): Promise<Result> => {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(o.headers ?? {}) }
    const k = o.key === undefined ? key : o.key
    if (k !== null && !('authorization' in headers) && !('x-api-key' in headers)) headers.authorization = `Bearer ${k}`
    const method = o.method ?? 'POST'
    const payload = o.raw ?? (body === undefined ? undefined : JSON.stringify(body))
    const res = await server.http.handle(
      new Request(`http://localhost${path}`, { method, headers, body: method === 'GET' || method === 'HEAD' ? undefined : payload }),
    )
    const text = await res.text()
    return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : {} }
  }

  const h: Harness = {
    server,
    clock,
    delivery,
    logs: logger.lines,
    dir,
    dbPath,
    key,
    call,
    send: (body, k) => call('/api/v1/send', body, { key: k }),
    verify: (body, k) => call('/api/v1/verify', body, { key: k }),
    listen: () => {
      server.http.listen({ hostname: '127.0.0.1', port: 0, ...LISTEN_OPTIONS })
      return `http://127.0.0.1:${server.http.server!.port}`
    },
    restart: () => {
      server.close()
      // Same file, clock, delivery and key; no second credit grant.
      return createHarness({ ...opts, credits: undefined, dir, clock, delivery, key, ownsDir })
    },
    close: () => {
      void server.http.server?.stop(true)
      server.close()
      if (ownsDir) rmSync(dir, { recursive: true, force: true })
    },
  }
  return h
}

/** Test recipients (DECISIONS.md section 6). */
export const TEST = {
  PHONE_SUCCESS: '+15550100001',
  PHONE_FAIL: '+15550100002',
  PHONE_EXPIRED: '+15550100003',
  EMAIL_SUCCESS: 'success@otpd.test',
  EMAIL_FAIL: 'fail@otpd.test',
} as const

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
export const MINUTE = 60_000
export const HOUR = 3_600_000
export const DAY = 86_400_000
