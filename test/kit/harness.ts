/**
 * Test harness: the real app on a temporary SQLite file with migrations (or,
 * with OTPD_TEST_DATABASE=postgres, a fresh database cloned from the migrated
 * template of the process's throwaway PostgreSQL cluster, test/kit/pg-cluster.ts), a recording delivery, a
 * manual clock, and a memory logger. Drive it with `call()` (app.handle), or
 * over a real port with `listen()`.
 */
import { describe, expect, test } from 'bun:test'
import type { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildServer, type Server } from '../../src/app/index.ts'
import { resolveConfig } from '../../src/app/load-config.ts'
import { LISTEN_OPTIONS } from '../../src/http/app.ts'
import { ManualClock } from '../../src/lib/clock.ts'
import { createMemoryLogger } from '../../src/lib/logger.ts'
import type { Delivery } from '../../src/otp/ports/index.ts'
import type { OutboundMessage } from '../../src/otp/types.ts'
import { SqliteEngine } from '../../src/store/sqlite/engine.ts'
import { afterTest } from './cleanup.ts'
import { migratedDatabase, pgBinDir, sharedCluster } from './pg-cluster.ts'

/** The engine every test runs on: OTPD_TEST_DATABASE=postgres, else SQLite. */
export const ON_PG = process.env.OTPD_TEST_DATABASE === 'postgres'
/**
 * A test's own change of account `$1`'s balance by `$2`, past the ledger: SQLite
 * keeps it in the account's row, PostgreSQL in rows of `account_balances`
 * (docs/multi-node.md#an-accounts-balance).
 */
export const SHIFT_BALANCE_SQL = ON_PG
  ? 'UPDATE account_balances SET balance = balance + $2 WHERE account_id = $1 AND stripe = 0'
  : 'UPDATE accounts SET balance = balance + $2 WHERE id = $1'
/** Tests of the SQLite engine itself (WAL, fsync faults, backup...): they run once, in the SQLite run. */
export const sqliteOnly = ON_PG ? describe.skip : describe
export const testSqliteOnly = ON_PG ? test.skip : test
// The cluster starts (initdb, pg_ctl) when this module loads, outside any test's or hook's time limit.
if (ON_PG) sharedCluster()

/** The SQLite writer connection under a server (tests may reach into the engine; app/ and cli/ never do). */
export function sqliteClient(server: Pick<Server, 'engine'>): Database {
  if (!(server.engine instanceof SqliteEngine)) throw new Error(`the database is ${server.engine.name}, not SQLite`)
  return server.engine.db.$client
}

/** Closes the database under a running server, as a database gone away: SQLite's writer connection, or PostgreSQL's pools. */
export async function closeDatabaseUnder(server: Pick<Server, 'engine'>): Promise<void> {
  if (server.engine instanceof SqliteEngine) server.engine.db.$client.close()
  else await server.engine.close()
}

/** The server secret of the tests' PostgreSQL databases (PostgreSQL needs one in the config). */
export const PG_TEST_SECRET = 'otpd-test-secret-for-postgresql-0123456789'

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

/** Fails every message of the channels in `failing`; records the others. */
export class ChannelDelivery extends RecordingDelivery {
  failing = new Set<string>()
  override async deliver(m: OutboundMessage): Promise<{ provider: string }> {
    if (this.failing.has(m.channel)) throw new Error(`no ${m.channel} provider took it (test)`)
    return super.deliver(m)
  }
}

/** A delivery that takes each message and never answers, as a process stopped during the delivery leaves it; `seen` is the last message it took. */
export class StuckDelivery extends RecordingDelivery {
  seen: OutboundMessage | undefined
  override async deliver(message: OutboundMessage): Promise<{ provider: string }> {
    this.seen = message
    return new Promise(() => {})
  }
}

export interface Harness {
  server: Server
  clock: ManualClock
  delivery: RecordingDelivery
  logs: string[]
  dir: string
  dbPath: string
  /** The PostgreSQL database's URL (OTPD_TEST_DATABASE=postgres), else undefined. */
  databaseUrl: string | undefined
  /** A fresh active key on the default account. */
  key: string
  call(path: string, body?: unknown, opts?: CallOptions): Promise<Result>
  send(body: Record<string, unknown>, key?: string): Promise<Result>
  verify(body: Record<string, unknown>, key?: string): Promise<Result>
  /** Serves the app on a free loopback port (closed by close()); returns its base URL. */
  listen(): string
  /** Runs SQL on the test's database, whichever the engine (write portable SQL; `$1` parameters). */
  sql(text: string, params?: unknown[]): Promise<Record<string, any>[]>
  /**
   * Makes every request's write fail (SQLite: query_only; PostgreSQL: a
   * trigger on key_hits, which every authenticated request writes), or work again.
   */
  failWrites(on: boolean): Promise<void>
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
  /** PostgreSQL: use this database (restart) instead of a fresh one. */
  databaseUrl?: string
  /** The log lines' format (`logs`): JSON, as by default in production, or text, as on a terminal. */
  logFormat?: 'json' | 'text'
}

/**
 * The database part of a raw config for a test that builds its own server:
 * a SQLite file in `dir`, or a fresh PostgreSQL database and the tests'
 * secret. `url`: that PostgreSQL database instead of a fresh one.
 */
export async function testDatabase(dir: string, url?: string): Promise<{ database: Record<string, any>; server: Record<string, any> }> {
  const path = join(dir, 'otpd.db')
  if (!ON_PG) return { database: { path }, server: {} }
  return { database: { path, url: url ?? (await migratedDatabase()) }, server: { secret: PG_TEST_SECRET } }
}

/**
 * Every byte the database holds, to search for secrets: SQLite's files (the
 * database, its WAL and shared memory), or PostgreSQL's data as pg_dump
 * writes it (text in clear, bytea in hex).
 */
export function databaseBytes(h: Harness): { name: string; bytes: Buffer }[] {
  if (h.databaseUrl !== undefined) {
    const dump = Bun.spawnSync([join(pgBinDir(), 'pg_dump'), '--data-only', h.databaseUrl])
    if (dump.exitCode !== 0) throw new Error(`pg_dump failed: ${dump.stderr.toString()}`)
    return [{ name: 'pg_dump', bytes: Buffer.from(dump.stdout) }]
  }
  return [h.dbPath, `${h.dbPath}-wal`, `${h.dbPath}-shm`].filter(existsSync).map((f) => ({ name: f, bytes: readFileSync(f) }))
}

export async function createHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'otpd-test-'))
  const ownsDir = opts.ownsDir ?? !opts.dir
  const dbPath = join(dir, 'otpd.db')
  const clock = opts.clock ?? new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0))
  const delivery = opts.delivery ?? new RecordingDelivery()
  const logger = createMemoryLogger(opts.logFormat)
  const raw = structuredClone(opts.config ?? {})
  // The fraud guard (docs/api.md#fraud-guard) is off unless a test sets [fraud]: the v1
  // tests send many codes to numbers of countries never approved, which it would refuse.
  raw.fraud ??= { mode: 'off' }
  raw.database = { ...(raw.database ?? {}), path: dbPath }
  const databaseUrl = ON_PG ? (opts.databaseUrl ?? (await migratedDatabase())) : undefined
  if (databaseUrl !== undefined) {
    raw.database.url = databaseUrl
    raw.server = { ...(raw.server ?? {}) }
    if (raw.server.secret === undefined && raw.server.secret_env === undefined && raw.server.secret_file === undefined) raw.server.secret = PG_TEST_SECRET
  }
  const env = opts.env ?? {}
  const config = resolveConfig(raw, 'test', env)
  // A failed flush stops the storage; the test process goes on (the server's default exits).
  const onFatal = opts.onFatal ?? ((err: Error) => logger.error('fatal storage failure', { error: err.message }))
  const server = await buildServer(config, { clock, delivery: opts.configuredDelivery ? undefined : delivery, logger, env, onFatal })
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

  let pgAdmin: SQL | undefined
  const sql = async (text: string, params: unknown[] = []): Promise<Record<string, any>[]> => {
    if (databaseUrl === undefined) {
      const q = sqliteClient(server).query(text.replace(/\$(\d+)/g, '?$1'))
      return q.all(...(params as never[])) as Record<string, any>[]
    }
    pgAdmin ??= new SQL({ url: databaseUrl, max: 1 })
    return [...((await pgAdmin.unsafe(text, params)) as Record<string, any>[])]
  }
  const failWrites = async (on: boolean): Promise<void> => {
    if (databaseUrl === undefined) {
      sqliteClient(server).run(`PRAGMA query_only = ${on ? 1 : 0}`)
      return
    }
    if (on) {
      await sql(
        `CREATE OR REPLACE FUNCTION otpd_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'attempt to write a readonly database (test)'; END $$`,
      )
      await sql('CREATE OR REPLACE TRIGGER otpd_test_refuse BEFORE INSERT OR UPDATE ON key_hits FOR EACH ROW EXECUTE FUNCTION otpd_test_refuse()')
    } else await sql('DROP TRIGGER IF EXISTS otpd_test_refuse ON key_hits')
  }

  const h: Harness = {
    server,
    clock,
    delivery,
    logs: logger.lines,
    dir,
    dbPath,
    databaseUrl,
    key,
    call,
    send: (body, k) => call('/api/v1/send', body, { key: k }),
    verify: (body, k) => call('/api/v1/verify', body, { key: k }),
    sql,
    failWrites,
    listen: () => {
      server.http.listen({ hostname: '127.0.0.1', port: 0, ...LISTEN_OPTIONS })
      return `http://127.0.0.1:${server.http.server!.port}`
    },
    restart: () => {
      void pgAdmin?.close()
      server.close()
      // Same file, clock, delivery and key; no second credit grant.
      return createHarness({ ...opts, credits: undefined, dir, clock, delivery, key, ownsDir, databaseUrl })
    },
    close: () => {
      void server.http.server?.stop(true)
      void pgAdmin?.close()
      server.close()
      if (ownsDir) rmSync(dir, { recursive: true, force: true })
    },
  }
  return h
}

/**
 * The set-up of a file whose tests each build their own harness: every
 * harness built through the returned `start` during a test (and every one
 * its restart() built) is closed after the test (test/kit/cleanup.ts), newest
 * first, since a restart shares its directory with the harness it replaced.
 * `start(opts)` takes `defaults` with `opts` over them (key by key, not deeply).
 */
export function harnessPerTest(defaults: HarnessOptions = {}): (opts?: HarnessOptions) => Promise<Harness> {
  const track = (h: Harness): Harness => {
    let closed = false
    const { close, restart } = h
    h.close = () => {
      if (closed) return
      closed = true
      close()
    }
    // restart() closes the server it replaces; the new one is tracked in its place.
    h.restart = async () => {
      closed = true
      return track(await restart())
    }
    afterTest(() => h.close())
    return h
  }
  return async (opts = {}) => track(await createHarness({ ...defaults, ...opts }))
}

/** `r` is a documented error: this status, and the body `{ error, request_id }` with the id of its X-Request-Id header. */
export function expectError(r: Pick<Result, 'status' | 'headers' | 'json'>, status: number, error: string): void {
  expect(r.status).toBe(status)
  expect(r.json).toEqual({ error, request_id: r.headers.get('x-request-id')! })
}

/** A send to a real (not test) recipient, which must succeed: its verification id and the code the provider got. */
export async function sendReal(h: Harness, recipient = '+14155550123', extra: Record<string, unknown> = {}): Promise<{ id: string; code: string }> {
  const r = await h.send({ channel: 'sms', recipient, ...extra })
  expect(r.status).toBe(200)
  return { id: r.json.verification_id as string, code: h.delivery.lastCode() }
}

/** Test recipients (docs/api.md#test-recipients). */
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
