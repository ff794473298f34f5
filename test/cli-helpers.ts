/** Runs the real `otpd` entry point as a subprocess, on a config in a temp dir. */
import { afterEach } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openCore } from '../src/app.ts'
import { resolveConfig } from '../src/config/load.ts'

const MAIN = join(import.meta.dir, '..', 'src', 'main.ts')

export interface CliRun {
  code: number
  stdout: string
  stderr: string
}

export interface CliEnv {
  dir: string
  configFile: string
  /** Variables added to every command's environment, `serve`'s included. */
  extraEnv: Record<string, string>
  run(...args: string[]): CliRun
  /** Like run, without blocking this process (traffic in the test keeps flowing). */
  runAsync(...args: string[]): Promise<CliRun>
  json(...args: string[]): any
  close(): void
}

/** What the tests of a file started; cleanUpAfterEach() stops and removes it. */
const startedServers: RunningServer[] = []
const createdEnvs: CliEnv[] = []

/**
 * After each test of the calling file: stops every server startServer()
 * started, then removes every directory cliEnv() made (both are idempotent).
 */
export function cleanUpAfterEach(): void {
  afterEach(async () => {
    await Promise.all(startedServers.splice(0).map((s) => s.stop()))
    for (const env of createdEnvs.splice(0)) env.close()
  })
}

/**
 * A temp dir with a config naming a database in it. The database is created
 * (as `otpd serve` would) unless `noDatabase`: commands that only read refuse
 * a missing one.
 */
export function cliEnv(extraToml = '', extraEnv: Record<string, string> = {}, opts: { noDatabase?: boolean } = {}): CliEnv {
  const dir = mkdtempSync(join(tmpdir(), 'otpd-cli-'))
  const configFile = join(dir, 'otp.config.toml')
  writeFileSync(configFile, `[database]\npath = "${join(dir, 'otpd.db')}"\n${extraToml}`)
  if (!opts.noDatabase) openCore(resolveConfig({ database: { path: join(dir, 'otpd.db') } })).close()
  const run = (...args: string[]): CliRun => {
    const p = Bun.spawnSync(['bun', MAIN, ...args], { env: { ...process.env, ...extraEnv, OTPD_CONFIG: configFile }, cwd: dir })
    return { code: p.exitCode ?? -1, stdout: p.stdout.toString(), stderr: p.stderr.toString() }
  }
  const runAsync = async (...args: string[]): Promise<CliRun> => {
    const p = Bun.spawn(['bun', MAIN, ...args], { env: { ...process.env, ...extraEnv, OTPD_CONFIG: configFile }, cwd: dir, stdout: 'pipe', stderr: 'pipe' })
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
    return { code, stdout, stderr }
  }
  const env: CliEnv = {
    dir,
    configFile,
    extraEnv,
    run,
    runAsync,
    json: (...args) => {
      const r = run(...args, '--json')
      if (r.code !== 0) throw new Error(`otpd ${args.join(' ')} failed: ${r.stderr}`)
      return JSON.parse(r.stdout)
    },
    close: () => rmSync(dir, { recursive: true, force: true }),
  }
  createdEnvs.push(env)
  return env
}

export interface RunningServer {
  url: string
  proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>
  output: () => string
  stop(): Promise<number>
}

/** Starts `otpd serve` on a free port and waits until it listens. */
export async function startServer(env: CliEnv): Promise<RunningServer> {
  const proc = Bun.spawn(['bun', MAIN, 'serve', '--listen', '127.0.0.1:0'], {
    env: { ...process.env, ...env.extraEnv, OTPD_CONFIG: env.configFile },
    cwd: env.dir,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let out = ''
  const reader = proc.stdout.getReader()
  const decoder = new TextDecoder()
  const deadline = Date.now() + 15_000
  let url = ''
  while (!url) {
    if (Date.now() > deadline) throw new Error(`server did not start:\n${out}`)
    const { value, done } = await reader.read()
    if (done) throw new Error(`server exited:\n${out}${await new Response(proc.stderr).text()}`)
    out += decoder.decode(value)
    url = /otpd listening on (https?:\/\/[0-9.]+:[0-9]+)/.exec(out)?.[1] ?? ''
  }
  // Keep draining stdout so the server never blocks on a full pipe.
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      out += decoder.decode(value)
    }
  })()
  const server: RunningServer = {
    url,
    proc,
    output: () => out,
    stop: async () => {
      proc.kill('SIGTERM')
      return await proc.exited
    },
  }
  startedServers.push(server)
  return server
}

/** POSTs JSON with a Bearer key to a running server. */
export async function post(url: string, path: string, key: string, body: unknown): Promise<{ status: number; json: Record<string, any> }> {
  const r = await fetch(url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: r.status, json: (await r.json()) as Record<string, any> }
}
