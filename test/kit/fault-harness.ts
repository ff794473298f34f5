/**
 * What the fault suite (test/faults/*.test.ts) shares: the LD_PRELOAD shim
 * (test/kit/fault-shim.c, compiled here once per run) and its triggers, a config
 * in a temp dir whose processes all carry the shim, real `otpd serve`
 * processes, a webhook gateway stub that records each message's code, and
 * bounded HTTP helpers. Everything talks to 127.0.0.1 only.
 * OTPD_BIN=path runs a compiled binary instead of `bun src/main.ts`.
 */
import { afterAll } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cliJson, runFromSource, spawnServer, type OtpdEnv, type ServerProc } from './processes.ts'
import { startVendorStub, type Recorded, type VendorStub } from './vendor-stub.ts'

if (process.env.OTPD_BIN === undefined) runFromSource()

let shimPath: string | undefined

/**
 * Compiles the shim once per version of its source, to a file named by its
 * hash (kept for the next run); without a C compiler the suite fails here, loudly.
 */
export function buildShim(): string {
  if (shimPath) return shimPath
  const source = join(import.meta.dir, 'fault-shim.c')
  const out = join(tmpdir(), `otpd-fault-shim-${new Bun.CryptoHasher('sha256').update(readFileSync(source)).digest('hex').slice(0, 16)}.so`)
  if (!existsSync(out)) {
    const cc = Bun.which('cc') ?? Bun.which('gcc')
    if (cc === null) throw new Error('the fault suite needs a C compiler (cc) to build its LD_PRELOAD shim: apt-get install gcc (.ci/run does)')
    const tmp = `${out}.${process.pid}`
    const p = Bun.spawnSync([cc, '-shared', '-fPIC', '-o', tmp, source, '-ldl'])
    if (p.exitCode !== 0) throw new Error(`compiling test/kit/fault-shim.c failed:\n${p.stderr.toString()}`)
    renameSync(tmp, out)
  }
  shimPath = out
  return out
}

export type FaultKind = 'sync' | 'write'

export interface FaultEnv extends OtpdEnv {
  /** Where the shim looks for its triggers. */
  fiDir: string
  /** From now on `kind` calls fail on every descriptor whose path contains `match`. */
  fault(kind: FaultKind, match: string, errno?: 'EIO' | 'ENOSPC'): void
  clear(kind?: FaultKind): void
  /** Calls the shim has failed so far. */
  hits(): number
}

export interface FaultEnvOptions {
  /** The database's directory (a tmpfs mount); the env's own directory otherwise. */
  dbDir?: string
  /** Lines for the `[database]` table. */
  database?: string
  vars?: Record<string, string>
}

const envs: { close(): void }[] = []
const servers: ServerProc[] = []
const stubs: VendorStub[] = []
const cleanups: (() => void)[] = []

/** Runs `fn` after the file's tests, once their servers are dead and before the temp dirs go (an unmount). */
export function afterServers(fn: () => void): void {
  cleanups.push(fn)
}

/**
 * Registers, in the calling test file, the clean-up after its tests: every
 * server still running is killed, the stubs closed, the `afterServers`
 * callbacks run, then the temp dirs removed. (Called by each file: a hook
 * registered when this module loads would belong to the first file only.)
 */
export function cleanUpAfterAll(): void {
  afterAll(cleanUp)
}

async function cleanUp(): Promise<void> {
  for (const s of servers.splice(0)) {
    if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGKILL')
    await s.proc.exited
  }
  for (const s of stubs.splice(0)) s.close()
  for (const fn of cleanups.splice(0)) fn()
  for (const e of envs.splice(0)) e.close()
}

export function makeFaultEnv(name: string, toml: string, opts: FaultEnvOptions = {}): FaultEnv {
  const dir = mkdtempSync(join(tmpdir(), `otpd-fault-${name}-`))
  const fiDir = join(dir, 'fi')
  mkdirSync(fiDir)
  const dbPath = join(opts.dbDir ?? dir, 'otpd.db')
  const configFile = join(dir, 'otp.config.toml')
  writeFileSync(configFile, `[database]\npath = "${dbPath}"\n${opts.database ?? ''}\n${toml}`)
  const vars = { ...opts.vars, LD_PRELOAD: buildShim(), FAULT_SHIM_DIR: fiDir, FAULT_WEBHOOK_SECRET: 'whsec-fault-suite-0123456789' }
  const env: FaultEnv = {
    dir,
    configFile,
    dbPath,
    vars,
    fiDir,
    fault: (kind, match, errno = 'EIO') => writeFileSync(join(fiDir, kind), `${match}\n${errno}\n`),
    clear: (kind) => {
      for (const k of kind ? [kind] : (['sync', 'write'] as const)) rmSync(join(fiDir, k), { force: true })
    },
    hits: () => {
      try {
        return readFileSync(join(fiDir, 'hits'), 'utf8').split('\n').filter(Boolean).length
      } catch {
        return 0
      }
    },
    close: () => rmSync(dir, { recursive: true, force: true }),
  }
  envs.push(env)
  return env
}

/** Limits and the fraud guard out of the way, `timeoutMs` for delivery, and sms through `provider` (a TOML table body). */
export function faultConfig(timeoutMs: number, provider = 'type = "noop"'): string {
  return `
[fraud]
mode = "off"
[limits]
key_requests_per_minute = 1000000000
recipient_per_minute = 1000000000
recipient_per_hour = 1000000000
recipient_per_day = 1000000000
[delivery]
timeout_ms = ${timeoutMs}
[channels]
sms = ["gw"]
[providers.gw]
${provider}
`
}

/** A provider table pointing the webhook provider at `gw`. */
export const webhookProvider = (gw: Gateway) => `type = "webhook"\nurl = "${gw.url}/otp"\nsecret_env = "FAULT_WEBHOOK_SECRET"`

export interface Delivered {
  verificationId: string
  code: string
  at: number
}

/** The gateway stub: records each message (and the code in it); `respond` decides the answer. */
export interface Gateway {
  url: string
  delivered: Delivered[]
  respond: (d: Delivered) => Response | Promise<Response>
  codeOf(id: string): string | undefined
}

export function startGateway(): Gateway {
  const gw: Gateway = {
    url: '',
    delivered: [],
    respond: () => new Response(null, { status: 204 }),
    codeOf: (id) => gw.delivered.find((d) => d.verificationId === id)?.code,
  }
  const stub = startVendorStub((req: Recorded) => {
    const body = JSON.parse(req.body) as { verification_id: string; message: string }
    const d = { verificationId: body.verification_id, code: /\d{4,10}/.exec(body.message)?.[0] ?? '', at: Date.now() }
    gw.delivered.push(d)
    return gw.respond(d)
  })
  stubs.push(stub)
  gw.url = stub.url
  return gw
}

/** `otpd serve` on a free port; killed after the file's tests if still running. */
export async function serve(env: OtpdEnv, timeoutMs = 20_000): Promise<ServerProc> {
  const { proc, listening } = spawnServer(env)
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs)
  try {
    const s = await listening
    servers.push(s)
    return s
  } finally {
    clearTimeout(timer)
  }
}

/** SIGTERM, then the exit code (SIGKILL after `ms`, then -1). */
export async function stop(s: ServerProc, ms = 15_000): Promise<number> {
  s.proc.kill('SIGTERM')
  const code = await Promise.race([s.proc.exited, Bun.sleep(ms).then(() => -1)])
  if (code === -1) s.proc.kill('SIGKILL')
  return code
}

/** Exit code of a process that should stop by itself within `ms`, or null if it did not. */
export async function exitWithin(s: ServerProc, ms: number): Promise<number | null> {
  return Promise.race([s.proc.exited, Bun.sleep(ms).then(() => null)])
}

/** An API key and 1000 credits, through the CLI (its own process, the shim loaded, no trigger set). */
export function provision(env: OtpdEnv, credits = 1000): string {
  const key = cliJson(env, 'keys', 'create', '--init').key as string
  cliJson(env, 'credits', 'add', String(credits))
  return key
}

export interface Answer {
  /** -1: the connection failed or timed out (no answer). */
  status: number
  json: Record<string, any>
  ms: number
}

export async function call(url: string, path: string, opts: { key?: string; body?: unknown; timeoutMs?: number } = {}): Promise<Answer> {
  const t = performance.now()
  try {
    const r = await fetch(url + path, {
      method: opts.body === undefined ? 'GET' : 'POST',
      headers: { ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}), 'content-type': 'application/json' },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: AbortSignal.timeout(opts.timeoutMs ?? 15_000),
    })
    const text = await r.text()
    let json: Record<string, any>
    try {
      json = JSON.parse(text)
    } catch {
      json = { unparsable: text }
    }
    return { status: r.status, json, ms: performance.now() - t }
  } catch (err) {
    return { status: -1, json: { error: String(err) }, ms: performance.now() - t }
  }
}

let phone = 0
/** A fresh real (non-test) recipient per call. */
export const nextRecipient = () => `+1415${String(2_000_000 + (phone++ % 1_000_000)).padStart(7, '0')}`

export const send = (url: string, key: string, timeoutMs?: number) =>
  call(url, '/api/v1/send', { key, body: { channel: 'sms', recipient: nextRecipient() }, timeoutMs })

export const verify = (url: string, key: string, id: string, code: string) => call(url, '/api/v1/verify', { key, body: { verification_id: id, code } })

/** The documented 500 bodies (docs/api.md#errors). */
export const SEND_500 = ['Failed to send verification', 'Internal server error']

/** Server output lines as JSON (the non-JSON ones skipped). */
export function logLines(s: ServerProc, from = 0): Record<string, any>[] {
  return s
    .output()
    .slice(from)
    .split('\n')
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, any>]
      } catch {
        return []
      }
    })
}
