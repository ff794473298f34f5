/** Runs the real `otpd` entry point as a subprocess, on a config in a temp dir. */
import { afterEach } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../src/store/sqlite/db.ts'
import { loadGuardedSecret } from '../src/store/sqlite/guards.ts'
import { ON_PG, PG_TEST_SECRET } from './harness.ts'
import { pgBinDir, sharedCluster } from './pg/cluster.ts'

const MAIN = join(import.meta.dir, '..', 'src', 'main.ts')

export interface CliRun {
  code: number
  stdout: string
  stderr: string
}

export interface CliEnv {
  dir: string
  configFile: string
  /** The PostgreSQL database's URL (OTPD_TEST_DATABASE=postgres), else undefined. */
  databaseUrl: string | undefined
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
 * a missing one. With OTPD_TEST_DATABASE=postgres the config names a fresh
 * PostgreSQL database instead (the first command migrates it) and gives the
 * server secret PostgreSQL requires, unless `extraToml` gives one.
 */
export function cliEnv(extraToml = '', extraEnv: Record<string, string> = {}, opts: { noDatabase?: boolean } = {}): CliEnv {
  const dir = mkdtempSync(join(tmpdir(), 'otpd-cli-'))
  const configFile = join(dir, 'otp.config.toml')
  const path = join(dir, 'otpd.db')
  const databaseUrl = ON_PG ? freshDatabaseSync() : undefined
  const url = databaseUrl === undefined ? '' : `url = "${databaseUrl}"\n`
  writeFileSync(configFile, `[database]\npath = "${path}"\n${url}${databaseUrl === undefined ? extraToml : withTestSecret(extraToml)}`)
  if (!opts.noDatabase && databaseUrl === undefined) {
    // As `otpd serve` would: the file, its migrations and its secret.
    const db = openDatabase({ path })
    loadGuardedSecret(db.$client, undefined, path)
    db.$client.close()
  }
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
    databaseUrl,
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

/** A new empty database on this process's cluster, made without awaiting (cliEnv is synchronous). */
function freshDatabaseSync(): string {
  const cluster = sharedCluster()
  const name = `otpd_cli_${process.pid}_${++databases}_${Math.random().toString(36).slice(2, 8)}`
  const p = Bun.spawnSync([join(pgBinDir(), 'psql'), '-X', '-q', '-h', cluster.dir, '-p', String(cluster.port), '-U', 'postgres', '-d', 'postgres', '-c', `CREATE DATABASE "${name}"`])
  if (p.exitCode !== 0) throw new Error(`CREATE DATABASE failed: ${p.stderr.toString()}`)
  return cluster.url(name)
}
let databases = 0

/** The config text with the tests' PostgreSQL secret in [server], unless it sets a secret itself. */
function withTestSecret(toml: string): string {
  if (/^\s*secret(_env|_file)?\s*=/m.test(toml)) return toml
  const line = `secret = "${PG_TEST_SECRET}"`
  return /^\[server\]\s*$/m.test(toml) ? toml.replace(/^\[server\]\s*$/m, `[server]\n${line}`) : `${toml}\n[server]\n${line}\n`
}
