/**
 * The throwaway cluster itself: it runs as a non-root user, listens on
 * 127.0.0.1 and a unix socket, hands out distinct empty databases, survives a
 * stop/start with its committed data (fsync on), and is gone when its process
 * exits, even by kill -9, or else when the next cluster starts. Runs when OTPD_TEST_DATABASE=postgres (plain
 * `bun test` needs no PostgreSQL installed).
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import { migrationJournal } from '../../src/store/pg/migrations/index.ts'
import { freshDatabase, migratedDatabase, sharedCluster, startCluster } from '../kit/pg-cluster.ts'
import { waitFor } from '../kit/wait-for.ts'

setDefaultTimeout(60_000)

/** A bun process holding its shared cluster for a minute, and the cluster's directory once it is up. */
async function holdSharedCluster(): Promise<{ p: Bun.Subprocess<'ignore', 'pipe', 'inherit'>; dir: string }> {
  const script = `import { sharedCluster } from ${JSON.stringify(join(import.meta.dir, '..', 'kit', 'pg-cluster.ts'))}
const c = sharedCluster(); console.log(c.dir); await Bun.sleep(60_000)`
  const p = Bun.spawn(['bun', '-e', script], { stdout: 'pipe', stderr: 'inherit' })
  const reader = p.stdout.getReader()
  let out = ''
  while (!out.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) break
    out += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  return { p, dir: out.trim() }
}

/** Pids of the processes whose command line contains `text` (from /proc: no procps needed). */
function processesWhoseCommandHas(text: string): number[] {
  const found: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ').includes(text)) found.push(Number(name))
    } catch {
      // Gone meanwhile.
    }
  }
  return found
}

/** The parent of a process, undefined once it is gone. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  } catch {
    return undefined
  }
}

/** Whether the process exists and is not a zombie waiting to be reaped. */
function running(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z'
  } catch {
    return false
  }
}

describe.skipIf(process.env.OTPD_TEST_DATABASE !== 'postgres')('throwaway PostgreSQL cluster', () => {
  test('fresh databases are distinct and empty; settings as documented', async () => {
    const c = sharedCluster()
    expect(sharedCluster()).toBe(c)
    const a = await freshDatabase()
    const b = await freshDatabase()
    expect(a).not.toBe(b)
    expect(a.startsWith(`postgres://postgres@127.0.0.1:${c.port}/`)).toBe(true)
    const sql = new SQL(a)
    try {
      const tables = await sql`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'`
      expect(tables[0].n).toBe(0)
      const s = await sql`SELECT current_setting('fsync') AS fsync, current_setting('max_connections') AS mc, current_setting('listen_addresses') AS la`
      expect(s[0]).toEqual({ fsync: 'on', mc: '200', la: '127.0.0.1' })
      const owner = await sql`SELECT usename FROM pg_stat_activity WHERE pid = pg_backend_pid()`
      expect(owner[0].usename).toBe('postgres')
    } finally {
      await sql.close()
    }
    // The server process does not run as root.
    const pid = Number((await Bun.file(join(c.dataDir, 'postmaster.pid')).text()).split('\n')[0])
    expect(statSync(`/proc/${pid}`).uid).not.toBe(0)
    // The unix socket is in the temp dir.
    expect(existsSync(join(c.dir, `.s.PGSQL.${c.port}`))).toBe(true)
  })

  test('migrated databases are clones of one template: every migration applied, distinct, and the template takes no connection', async () => {
    const a = await migratedDatabase()
    const b = await migratedDatabase()
    expect(a).not.toBe(b)
    const sql = new SQL(a)
    try {
      const applied = await sql`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`
      expect(applied[0].n).toBe(migrationJournal.entries.length)
      await sql`CREATE TABLE only_here (v int)`
      const template = await sql`SELECT datistemplate, datallowconn FROM pg_database WHERE datname = 'otpd_template'`
      expect(template[0]).toEqual({ datistemplate: true, datallowconn: false })
    } finally {
      await sql.close()
    }
    // A change to one clone is not in the next.
    const other = new SQL(b)
    try {
      expect((await other`SELECT to_regclass('only_here') AS t`)[0].t).toBeNull()
    } finally {
      await other.close()
    }
  })

  test('stop and start keep committed rows, on the same port', async () => {
    // A private cluster: the shared one serves the other test files of this process.
    const c = startCluster()
    const url = await c.freshDatabase('restart')
    await c.psql('CREATE TABLE t (v int); INSERT INTO t VALUES (42)', new URL(url).pathname.slice(1))
    c.stop('immediate')
    expect(c.running()).toBe(false)
    await expect(c.psql('SELECT 1')).rejects.toThrow()
    c.start()
    expect(c.running()).toBe(true)
    expect((await c.psql('SELECT v FROM t', new URL(url).pathname.slice(1))).trim()).toBe('42')
    c.destroy()
  })

  test('a private cluster is removed by destroy()', () => {
    const c = startCluster()
    expect(c.running()).toBe(true)
    c.destroy()
    expect(existsSync(c.dir)).toBe(false)
  })

  test('a process killed with -9 leaves no cluster behind (the watchdog stops it)', async () => {
    const { p, dir } = await holdSharedCluster()
    expect(existsSync(join(dir, 'data', 'postmaster.pid'))).toBe(true)
    p.kill('SIGKILL')
    await p.exited
    await waitFor(() => !existsSync(dir), { what: 'the watchdog to remove the cluster', ms: 15_000 })
  })

  test('a cluster whose process and watchdog both died is stopped and removed when the next one starts', async () => {
    const { p, dir } = await holdSharedCluster()
    // A machine torn down mid-run: the watchdog goes first, then the process.
    const found = processesWhoseCommandHas(`kill -0 ${p.pid} `)
    // The watchdog's shell forks for each `sleep 1`: until the exec, its child has the same command line.
    const watchdogs = found.filter((pid) => {
      const parent = parentOf(pid)
      return parent !== undefined && !found.includes(parent)
    })
    expect(watchdogs.length).toBe(1)
    for (const pid of found) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // The fork's child was gone already.
      }
    }
    p.kill('SIGKILL')
    await p.exited
    // A fixed wait: longer than a watchdog's 1 s poll, so a surviving one would have stopped the cluster by now.
    await Bun.sleep(1500)
    const postmaster = Number(readFileSync(join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0])
    expect(running(postmaster)).toBe(true)
    const next = startCluster()
    try {
      expect(existsSync(dir)).toBe(false)
      expect(running(postmaster)).toBe(false)
    } finally {
      next.destroy()
    }
  })

  test('SIGTERM stops and removes the shared cluster at once', async () => {
    const { p, dir } = await holdSharedCluster()
    expect(existsSync(dir)).toBe(true)
    p.kill('SIGTERM')
    expect(await p.exited).toBe(143)
    expect(existsSync(dir)).toBe(false)
  })

  test('a normal exit stops and removes the shared cluster', async () => {
    const script = `import { sharedCluster } from ${JSON.stringify(join(import.meta.dir, '..', 'kit', 'pg-cluster.ts'))}
console.log(sharedCluster().dir)`
    const p = Bun.spawnSync(['bun', '-e', script], { stdout: 'pipe', stderr: 'inherit' })
    expect(p.exitCode).toBe(0)
    const dir = p.stdout.toString().trim()
    expect(dir.length).toBeGreaterThan(0)
    expect(existsSync(dir)).toBe(false)
  })
})
