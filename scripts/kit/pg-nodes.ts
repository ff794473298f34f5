/**
 * Several `otpd serve` nodes on one PostgreSQL database, for the multi-node
 * tests and the bench: a config in a temp dir that names the database by URL
 * and carries a server secret (PostgreSQL requires one in the config, shared
 * by every node), then N real server processes on free loopback ports.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnServer, type OtpdEnv, type ServerProc } from './otpd.ts'

export interface PgEnvOptions {
  /** Extra lines for `[database]` (pool size...). */
  database?: string
  /** Extra lines for `[server]`. */
  server?: string
  /** The server secret; a new random one by default. */
  secret?: string
  vars?: Record<string, string>
}

/** A config naming the PostgreSQL database `url`; `toml` holds the other tables. */
export function pgEnv(name: string, url: string, toml = '', opts: PgEnvOptions = {}): OtpdEnv & { url: string; secret: string } {
  const dir = mkdtempSync(join(tmpdir(), `otpd-${name}-`))
  const configFile = join(dir, 'otp.config.toml')
  const secret = opts.secret ?? randomBytes(32).toString('hex')
  writeFileSync(configFile, `[database]\nurl = "${url}"\n${opts.database ?? ''}\n[server]\nsecret = "${secret}"\n${opts.server ?? ''}\n${toml}`)
  return { dir, configFile, dbPath: join(dir, 'unused.db'), vars: opts.vars ?? {}, url, secret, close: () => rmSync(dir, { recursive: true, force: true }) }
}

/** Starts `n` nodes on the env's database (together: migrations run once under their lock). */
export async function startNodes(env: OtpdEnv, n: number, timeoutMs = 30_000): Promise<ServerProc[]> {
  const spawned = Array.from({ length: n }, () => spawnServer(env))
  const timer = setTimeout(() => spawned.forEach((s) => s.proc.kill('SIGKILL')), timeoutMs)
  try {
    return await Promise.all(spawned.map((s) => s.listening))
  } catch (e) {
    spawned.forEach((s) => s.proc.kill('SIGKILL'))
    throw e
  } finally {
    clearTimeout(timer)
  }
}

/** Stops nodes (SIGTERM, then SIGKILL after `graceMs`) and waits for them. */
export async function stopNodes(nodes: ServerProc[], graceMs = 5_000): Promise<void> {
  await Promise.all(
    nodes.map(async (n) => {
      if (n.proc.exitCode !== null || n.proc.signalCode !== null) return
      n.proc.kill('SIGTERM')
      const t = setTimeout(() => n.proc.kill('SIGKILL'), graceMs)
      await n.proc.exited
      clearTimeout(t)
    }),
  )
}
