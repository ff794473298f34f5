/**
 * A throwaway PostgreSQL cluster for tests and benches: Debian's initdb and
 * pg_ctl in a temp directory, run as a non-root user (initdb refuses root: as
 * root we use `runuser -u postgres --`), listening on 127.0.0.1 on a free port
 * and on a unix socket in the temp dir, trust auth, fsync on (tests check
 * durability), settings sized for a small shared box.
 *
 * One cluster per process (`sharedCluster()`), started by its first caller and
 * stopped with `pg_ctl stop -m immediate` and removed when the process exits.
 * A watchdog shell does the same if the process dies without running its exit
 * handlers (kill -9, a crashed test runner), so no postmaster outlives us.
 * Where the watchdog died too (a machine or container torn down mid-run),
 * the next cluster to start stops and removes it: each directory names its
 * process in `owner.pid`. `startCluster()` makes an extra private one (the
 * caller destroys it).
 */
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync, appendFileSync, readFileSync } from 'node:fs'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import { databaseMaker } from './pg-databases.ts'

/** The superuser initdb creates (-U): the same name whichever OS user runs it. */
const SUPERUSER = 'postgres'

export interface PgCluster {
  readonly host: string
  readonly port: number
  /** The temp directory: data/, the unix socket and postgres.log live here. */
  readonly dir: string
  readonly dataDir: string
  readonly logFile: string
  /** postgres://postgres@127.0.0.1:<port>/<db> (trust auth: no password). */
  url(database?: string): string
  /** A new empty database with a unique name; returns its URL. */
  freshDatabase(prefix?: string): Promise<string>
  /** A new database with every embedded migration applied, cloned from the cluster's template; returns its URL. */
  migratedDatabase(prefix?: string): Promise<string>
  /** Runs SQL as the superuser with psql; returns psql's unaligned output. */
  psql(sql: string, database?: string): Promise<string>
  /** pg_ctl stop (fast: clients disconnected, checkpoint; immediate: like a crash). */
  stop(mode?: 'fast' | 'immediate' | 'smart'): void
  /** pg_ctl start on the same data directory and port; waits until it accepts connections. */
  start(): void
  running(): boolean
  /** Stops (immediate) and removes the temp directory. */
  destroy(): void
}

/** The newest /usr/lib/postgresql/<ver>/bin with initdb, or PG_BIN when set. */
export function pgBinDir(): string {
  const fromEnv = process.env.PG_BIN
  if (fromEnv) return fromEnv
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : []
  if (versions.length === 0) {
    throw new Error('PostgreSQL binaries not found in /usr/lib/postgresql/<version>/bin: apt-get install postgresql (Debian)')
  }
  return join(root, versions[0]!, 'bin')
}

interface RunAs {
  prefix: string[]
  uid: number
  gid: number
}

/** Who runs initdb and the server: ourselves when not root, else the `postgres` user. */
function runAs(): RunAs {
  const me = userInfo()
  if (me.uid !== 0) return { prefix: [], uid: me.uid, gid: me.gid }
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'))
  if (!line) throw new Error('running as root and no `postgres` user exists: initdb refuses root (apt-get install postgresql creates that user)')
  const [, , uid, gid] = line.split(':')
  return { prefix: ['runuser', '-u', 'postgres', '--'], uid: Number(uid), gid: Number(gid) }
}

function run(cmd: string[], what: string): string {
  const p = Bun.spawnSync(cmd, { stdout: 'pipe', stderr: 'pipe' })
  if (p.exitCode !== 0) throw new Error(`${what} failed (${p.exitCode}): ${p.stderr.toString()}${p.stdout.toString()}`)
  return p.stdout.toString()
}

/** A port the kernel just gave us and released (a short race we accept; start retries). */
function freePort(): number {
  const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = s.port
  s.stop(true)
  return port
}

function settings(port: number, dir: string): string {
  return `
# scripts/kit/pg-cluster.ts: a throwaway cluster for tests and benches
listen_addresses = '127.0.0.1'
port = ${port}
unix_socket_directories = '${dir}'
max_connections = 200
shared_buffers = 64MB
fsync = on
synchronous_commit = on
full_page_writes = on
max_wal_size = 256MB
log_min_messages = warning
log_line_prefix = '%m [%p] '
`
}

/** Starts a new cluster in its own temp dir. The caller must destroy() it. */
export function startCluster(): PgCluster {
  const bin = pgBinDir()
  const who = runAs()
  sweepAbandoned(bin, who)
  const dir = mkdtempSync(join(tmpdir(), 'otpd-pg-'))
  writeFileSync(join(dir, OWNER_FILE), String(process.pid))
  chownSync(dir, who.uid, who.gid)
  const dataDir = join(dir, 'data')
  const logFile = join(dir, 'postgres.log')
  run([...who.prefix, join(bin, 'initdb'), '-D', dataDir, '-U', SUPERUSER, '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync'], 'initdb')
  writeFileSync(join(dataDir, 'pg_hba.conf'), 'local all all trust\nhost all all 127.0.0.1/32 trust\n')
  let port = 0
  let up = false
  // PG_CPUS (scripts/bench --pg-cpus): the server and every process it starts on these CPUs.
  const pin = process.env.PG_CPUS ? ['taskset', '-c', process.env.PG_CPUS] : []
  const pgctl = (...args: string[]) => [...who.prefix, ...pin, join(bin, 'pg_ctl'), '-D', dataDir, ...args]
  const isUp = () => Bun.spawnSync(pgctl('status'), { stdout: 'ignore', stderr: 'ignore' }).exitCode === 0
  const start = () => {
    run(pgctl('-l', logFile, '-w', '-t', '60', 'start'), `pg_ctl start (see ${logFile})`)
    up = true
  }
  const confFile = join(dataDir, 'postgresql.conf')
  const baseConf = readFileSync(confFile, 'utf8')
  for (let attempt = 0; ; attempt++) {
    port = freePort()
    writeFileSync(confFile, baseConf)
    appendFileSync(confFile, settings(port, dir))
    try {
      start()
      break
    } catch (e) {
      if (attempt >= 2) {
        rmSync(dir, { recursive: true, force: true })
        throw e
      }
    }
  }
  const watchdog = spawnWatchdog(pgctl('stop', '-m', 'immediate', '-w'), dir)
  const psql = async (sql: string, database = 'postgres') => {
    const p = Bun.spawn(
      [join(bin, 'psql'), '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-h', dir, '-p', String(port), '-U', SUPERUSER, '-d', database, '-c', sql],
      {
        stdout: 'pipe',
        stderr: 'pipe',
      },
    )
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
    if (code !== 0) throw new Error(`psql failed (${code}): ${err}`)
    return out
  }
  const url = (database = 'postgres') => `postgres://${SUPERUSER}@127.0.0.1:${port}/${database}`
  const databases = databaseMaker(url)
  const cluster: PgCluster = {
    host: '127.0.0.1',
    port,
    dir,
    dataDir,
    logFile,
    url,
    freshDatabase: (prefix = 'otpd_test') => databases.fresh(prefix),
    migratedDatabase: (prefix = 'otpd_test') => databases.migrated(prefix),
    psql,
    stop(mode = 'fast') {
      if (!up) return
      databases.close()
      run(pgctl('stop', '-m', mode, '-w', '-t', '60'), 'pg_ctl stop')
      up = false
    },
    start() {
      if (isUp()) {
        up = true
        return
      }
      start()
    },
    running: isUp,
    destroy() {
      databases.close()
      if (up || isUp()) Bun.spawnSync(pgctl('stop', '-m', 'immediate', '-w'), { stdout: 'ignore', stderr: 'ignore' })
      up = false
      watchdog.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    },
  }
  return cluster
}

const OWNER_FILE = 'owner.pid'

/**
 * Stops and removes the clusters whose process is gone and whose watchdog
 * went with it: a test cluster holds gigabytes, and a few of them left behind
 * fill a disk. A directory without an owner file is left alone (another
 * process may be making it).
 */
function sweepAbandoned(bin: string, who: RunAs): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith('otpd-pg-')) continue
    const dir = join(tmpdir(), name)
    let owner: number
    try {
      owner = Number(readFileSync(join(dir, OWNER_FILE), 'utf8'))
    } catch {
      continue
    }
    if (!Number.isInteger(owner) || owner <= 0 || isAlive(owner)) continue
    Bun.spawnSync([...who.prefix, join(bin, 'pg_ctl'), '-D', join(dir, 'data'), 'stop', '-m', 'immediate', '-w'], { stdout: 'ignore', stderr: 'ignore' })
    try {
      rmSync(dir, { recursive: true, force: true })
    } catch {
      // Its watchdog, still at work, removes it meanwhile.
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM'
  }
}

/**
 * A detached shell that waits for this process to die, then stops the cluster
 * and removes its directory: the cleanup that survives kill -9.
 */
function spawnWatchdog(stopCmd: string[], dir: string): Bun.Subprocess {
  const quoted = stopCmd.map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(' ')
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ${quoted} >/dev/null 2>&1; rm -rf '${dir}'`
  const p = Bun.spawn(['sh', '-c', script], { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore', detached: true })
  p.unref()
  return p
}

let shared: PgCluster | undefined

/** This process's cluster: started by the first caller, destroyed at exit. */
export function sharedCluster(): PgCluster {
  if (shared) return shared
  shared = startCluster()
  const c = shared
  process.on('exit', () => c.destroy())
  // A stop signal ends the process without its exit handlers: clean up first
  // (the watchdog would too, a second later; this is the quick way).
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.once(signal, () => {
      c.destroy()
      process.exit(128 + ({ SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const)[signal])
    })
  }
  return c
}

/** The URL of a new empty database on this process's cluster. */
export function freshDatabase(prefix?: string): Promise<string> {
  return sharedCluster().freshDatabase(prefix)
}

/** The URL of a new migrated database on this process's cluster (a clone of its template). */
export function migratedDatabase(prefix?: string): Promise<string> {
  return sharedCluster().migratedDatabase(prefix)
}
