/**
 * What the reliability scripts share: the compiled binary (built when missing),
 * a config in a temp dir, CLI runs, a server process on a free port, JSON POSTs,
 * a seeded PRNG and a figures printer. Everything goes to 127.0.0.1 only.
 * OTPD_BIN=path runs another binary; OTPD_BIN=source runs `bun src/main.ts`.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const ROOT = resolve(import.meta.dir, '..', '..')
const BIN = process.env.OTPD_BIN ?? join(ROOT, 'dist', 'otpd')

let fromSource = BIN === 'source'

/** Run `bun src/main.ts` instead of the binary (bun test uses this: no build needed). */
export function runFromSource(): void {
  fromSource = true
}

/** The command that runs otpd: the compiled binary (built once if missing) or the source. */
export function otpdCommand(): string[] {
  if (fromSource) return ['bun', join(ROOT, 'src', 'main.ts')]
  if (!existsSync(BIN)) {
    console.error(`building ${BIN} ...`)
    const b = Bun.spawnSync(['bun', 'run', 'build'], { cwd: ROOT, stdout: 'inherit', stderr: 'inherit' })
    if (b.exitCode !== 0) throw new Error('bun run build failed')
  }
  return [BIN]
}

/**
 * Limits out of the way and the given channels on a `noop` provider, so real
 * sends debit credits and nothing throttles the load (the fraud guard off: a
 * load to random numbers is what it refuses); `extraLimits` adds lines to
 * `[limits]`.
 */
export function unthrottledNoop(channels: string[] = ['sms'], extraLimits = ''): string {
  return `
[limits]
key_requests_per_minute = 1000000000
recipient_per_minute = 1000000000
recipient_per_hour = 1000000000
recipient_per_day = 1000000000
${extraLimits}[fraud]
mode = "off"
[channels]
${channels.map((c) => `${c} = ["x"]`).join('\n')}
[providers.x]
type = "noop"
`
}

export interface OtpdEnv {
  dir: string
  configFile: string
  dbPath: string
  /** Extra environment for every process (provider secrets). */
  vars: Record<string, string>
  close(): void
}

/**
 * A temp directory with a config file: the database beside it (`database`
 * adds lines to that table), then `toml` (other tables).
 */
export function makeEnv(name: string, toml: string, opts: { vars?: Record<string, string>; database?: string } = {}): OtpdEnv {
  const dir = mkdtempSync(join(tmpdir(), `otpd-${name}-`))
  const dbPath = join(dir, 'otpd.db')
  const configFile = join(dir, 'otp.config.toml')
  const vars = opts.vars ?? {}
  writeFileSync(configFile, `[database]\npath = "${dbPath}"\n${opts.database ?? ''}\n${toml}`)
  return { dir, configFile, dbPath, vars, close: () => rmSync(dir, { recursive: true, force: true }) }
}

function processEnv(env: OtpdEnv): Record<string, string> {
  // No inherited OTPD_* settings: the config file says everything.
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTPD_'))) as Record<string, string>
  return { ...base, ...env.vars, OTPD_CONFIG: env.configFile }
}

export interface CliRun {
  code: number
  stdout: string
  stderr: string
  ms: number
}

export function cli(env: OtpdEnv, ...args: string[]): CliRun {
  const t = performance.now()
  const p = Bun.spawnSync([...otpdCommand(), ...args], { env: processEnv(env), cwd: env.dir })
  return { code: p.exitCode ?? -1, stdout: p.stdout.toString(), stderr: p.stderr.toString(), ms: performance.now() - t }
}

/** Like cli, without blocking the event loop (load keeps flowing meanwhile). */
export async function cliAsync(env: OtpdEnv, ...args: string[]): Promise<CliRun> {
  const t = performance.now()
  const p = Bun.spawn([...otpdCommand(), ...args], { env: processEnv(env), cwd: env.dir, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  return { code, stdout, stderr, ms: performance.now() - t }
}

export function cliJson(env: OtpdEnv, ...args: string[]): any {
  const r = cli(env, ...args, '--json')
  if (r.code !== 0) throw new Error(`otpd ${args.join(' ')} failed (${r.code}): ${r.stderr}`)
  return JSON.parse(r.stdout)
}

export interface ServerProc {
  url: string
  port: number
  proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>
  /** Everything the server printed so far (stdout and stderr). */
  output(): string
}

/** Spawns `otpd serve` on a free port. `listening` resolves with the URL once it listens. */
export function spawnServer(env: OtpdEnv): { proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>; listening: Promise<ServerProc> } {
  const proc = Bun.spawn([...otpdCommand(), 'serve', '--listen', '127.0.0.1:0'], {
    env: processEnv(env),
    cwd: env.dir,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let out = ''
  let resolveUrl!: (u: string) => void
  let rejectUrl!: (e: Error) => void
  const urlP = new Promise<string>((res, rej) => {
    resolveUrl = res
    rejectUrl = rej
  })
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder()
    for await (const chunk of stream) {
      out += decoder.decode(chunk, { stream: true })
      const m = /listening on (http:\/\/[0-9.]+:([0-9]+))/.exec(out)
      if (m) resolveUrl(m[1]!)
    }
  }
  void Promise.all([drain(proc.stdout), drain(proc.stderr)]).then(() => rejectUrl(new Error(`server exited before listening:\n${out}`)))
  const listening = urlP.then((url) => ({ url, port: Number(new URL(url).port), proc, output: () => out }))
  listening.catch(() => {})
  return { proc, listening }
}

export async function startServer(env: OtpdEnv, timeoutMs = 20_000): Promise<ServerProc> {
  const { proc, listening } = spawnServer(env)
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs)
  try {
    return await listening
  } finally {
    clearTimeout(timer)
  }
}

export interface Answer {
  status: number
  json: Record<string, any>
  requestIdHeader: string | null
}

/** POSTs JSON with a Bearer key; network errors are thrown. */
export async function post(url: string, path: string, key: string, body: unknown, signal?: AbortSignal): Promise<Answer> {
  const r = await fetch(url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  })
  const text = await r.text()
  let json: Record<string, any>
  try {
    json = JSON.parse(text)
  } catch {
    json = { unparsable: text }
  }
  return { status: r.status, json, requestIdHeader: r.headers.get('x-request-id') }
}

/** mulberry32: small, fast, seeded; runs reproduce from the printed seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export function seedFromArgs(fallback = Date.now() % 2 ** 31): number {
  const arg = process.argv.find((a) => a.startsWith('--seed='))
  return arg ? Number(arg.slice(7)) : fallback
}

export function numberArg(name: string, fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`))
  return arg ? Number(arg.slice(name.length + 3)) : fallback
}

/** Prints `name: value` lines and a final verdict; exits 1 on any violation. */
export function report(title: string, figures: Record<string, string | number>, violations: string[]): never {
  console.log(`\n== ${title} ==`)
  const width = Math.max(...Object.keys(figures).map((k) => k.length))
  for (const [k, v] of Object.entries(figures)) console.log(`${k.padEnd(width)}  ${v}`)
  if (violations.length > 0) {
    console.log(`\nVIOLATIONS (${violations.length}):`)
    for (const v of violations.slice(0, 50)) console.log(`  - ${v}`)
    console.log(`${title}: FAIL`)
    process.exit(1)
  }
  console.log(`${title}: OK (0 violations)`)
  process.exit(0)
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
