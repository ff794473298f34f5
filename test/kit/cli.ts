/** Runs the real `otpd` entry point as a subprocess, on a config in a temp dir. */
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse as parseToml } from 'smol-toml'
import { openDatabase } from '../../src/store/sqlite/db.ts'
import { loadCheckedSecret } from '../../src/store/sqlite/start-checks.ts'
import { afterTest, closeAfterTest } from './cleanup.ts'
import { ON_PG, PG_TEST_SECRET } from './harness.ts'
import { freshDatabase, migratedDatabase } from './pg-cluster.ts'

const MAIN = join(import.meta.dir, '..', '..', 'src', 'main.ts')

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
  /** The config file's text for `toml` (lines for [database] first, then tables): this env's database, and on PostgreSQL its secret. */
  configText(toml: string): string
  /** Variables added to every command's environment, `serve`'s included. */
  extraEnv: Record<string, string>
  run(...args: string[]): CliRun
  /** Like run, without blocking this process (traffic in the test keeps flowing). */
  runAsync(...args: string[]): Promise<CliRun>
  /** Like run, with `input` on the command's stdin. */
  runWithInput(input: string, ...args: string[]): CliRun
  json(...args: string[]): any
  close(): void
}

/** This process's environment for an `otpd` child, without the tests' own OTPD_TEST_DATABASE (otpd would warn that it sets nothing). */
function childEnv(): Record<string, string | undefined> {
  const { OTPD_TEST_DATABASE: _engine, ...rest } = process.env
  return rest
}

/**
 * A temp dir with a config naming a database in it. The database is created
 * (as `otpd serve` would) unless `noDatabase`: commands that only read refuse
 * a missing one. With OTPD_TEST_DATABASE=postgres the config names a fresh
 * PostgreSQL database instead, migrated (empty with `noDatabase`), and gives
 * the server secret PostgreSQL requires, unless `extraToml` gives one. The
 * directory is removed after the test (close() is idempotent).
 */
export async function cliEnv(extraToml = '', extraEnv: Record<string, string> = {}, opts: { noDatabase?: boolean } = {}): Promise<CliEnv> {
  const dir = mkdtempSync(join(tmpdir(), 'otpd-cli-'))
  const configFile = join(dir, 'otp.config.toml')
  const path = join(dir, 'otpd.db')
  const databaseUrl = ON_PG ? await (opts.noDatabase ? freshDatabase('otpd_cli') : migratedDatabase('otpd_cli')) : undefined
  const url = databaseUrl === undefined ? '' : `url = "${databaseUrl}"\n`
  const configText = (toml: string) => `[database]\npath = "${path}"\n${url}${databaseUrl === undefined ? toml : withTestSecret(toml)}`
  writeFileSync(configFile, configText(extraToml))
  if (!opts.noDatabase && databaseUrl === undefined) {
    // As `otpd serve` would: the file, its migrations and its secret.
    const db = openDatabase({ path })
    loadCheckedSecret(db.$client, undefined, path)
    db.$client.close()
  }
  const run = (...args: string[]): CliRun => {
    const p = Bun.spawnSync(['bun', MAIN, ...args], { env: { ...childEnv(), ...extraEnv, OTPD_CONFIG: configFile }, cwd: dir })
    return { code: p.exitCode ?? -1, stdout: p.stdout.toString(), stderr: p.stderr.toString() }
  }
  const runWithInput = (input: string, ...args: string[]): CliRun => {
    const p = Bun.spawnSync(['bun', MAIN, ...args], { env: { ...childEnv(), ...extraEnv, OTPD_CONFIG: configFile }, cwd: dir, stdin: Buffer.from(input) })
    return { code: p.exitCode ?? -1, stdout: p.stdout.toString(), stderr: p.stderr.toString() }
  }
  const runAsync = async (...args: string[]): Promise<CliRun> => {
    const p = Bun.spawn(['bun', MAIN, ...args], { env: { ...childEnv(), ...extraEnv, OTPD_CONFIG: configFile }, cwd: dir, stdout: 'pipe', stderr: 'pipe' })
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
    return { code, stdout, stderr }
  }
  const env: CliEnv = {
    dir,
    configFile,
    databaseUrl,
    configText,
    extraEnv,
    run,
    runAsync,
    runWithInput,
    json: (...args) => {
      const r = run(...args, '--json')
      if (r.code !== 0) throw new Error(`otpd ${args.join(' ')} failed: ${r.stderr}`)
      return JSON.parse(r.stdout)
    },
    close: () => rmSync(dir, { recursive: true, force: true }),
  }
  return closeAfterTest(env)
}

export interface RunningServer {
  url: string
  proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>
  output: () => string
  stop(): Promise<number>
}

/** Starts `otpd serve` on a free port and waits until it listens; stopped after the test (stop() is idempotent). */
export async function startServer(env: CliEnv): Promise<RunningServer> {
  const proc = Bun.spawn(['bun', MAIN, 'serve', '--listen', '127.0.0.1:0'], {
    env: { ...childEnv(), ...env.extraEnv, OTPD_CONFIG: env.configFile },
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
  afterTest(() => server.stop())
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

/** The config text with the tests' PostgreSQL secret in [server], unless it sets a secret itself. */
function withTestSecret(toml: string): string {
  let server: Record<string, unknown>
  try {
    server = (parseToml(toml).server ?? {}) as Record<string, unknown>
  } catch {
    return toml // not TOML on purpose: the test expects that error, not one about the secret
  }
  if (server.secret !== undefined || server.secret_env !== undefined || server.secret_file !== undefined) return toml
  const line = `secret = "${PG_TEST_SECRET}"`
  return /^\[server\]\s*$/m.test(toml) ? toml.replace(/^\[server\]\s*$/m, `[server]\n${line}`) : `${toml}\n[server]\n${line}\n`
}

/** Runs SQL on an env's database, whichever the engine (portable SQL). */
export async function queryDatabase(env: CliEnv, text: string): Promise<Record<string, any>[]> {
  if (env.databaseUrl !== undefined) {
    const sql = new SQL({ url: env.databaseUrl, max: 1 })
    try {
      return [...((await sql.unsafe(text)) as Record<string, any>[])]
    } finally {
      await sql.close()
    }
  }
  const db = new Database(join(env.dir, 'otpd.db'), { readonly: true })
  try {
    return db.query(text).all() as Record<string, any>[]
  } finally {
    db.close()
  }
}
