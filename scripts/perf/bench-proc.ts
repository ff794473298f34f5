/**
 * Processes for scripts/bench: a server started and read until it listens,
 * and what /proc says about a process (CPU time, RSS) and the machine (steal).
 */
import { readdirSync, readFileSync } from 'node:fs'

export interface Proc {
  url: string
  pid: number
  output: () => string
  /** Log lines at level error, whole run (start-up output and stderr included). */
  errorLines: () => number
  stop(): Promise<void>
}

/** The command, on the given CPUs (a taskset list) when pinning. */
export const pinned = (cpus: string | undefined, cmd: string[]) => (cpus === undefined ? cmd : ['taskset', '-c', cpus, ...cmd])

/** No inherited OTPD_* settings: the bench config is the whole configuration. */
export function cleanEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter(([k, v]) => !k.startsWith('OTPD_') && v !== undefined)) as Record<string, string>
}

const ERROR_MARK = Buffer.from('"level":"error"')

/** Starts `cmd` and waits for its "listening on URL" line. */
export async function startServer(cmd: string[], env: Record<string, string>, cwd: string, cpus?: string): Promise<Proc> {
  const proc = Bun.spawn(pinned(cpus, cmd), { cwd, env: { ...cleanEnv(), ...env }, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  let out = ''
  let errorLines = 0
  const reader = proc.stdout.getReader()
  const decoder = new TextDecoder()
  let url = ''
  const deadline = Date.now() + 15_000
  while (!url) {
    if (Date.now() > deadline) throw new Error(`${cmd[0]} did not start:\n${out}`)
    const { value, done } = await reader.read()
    if (done) throw new Error(`${cmd.join(' ')} exited:\n${out}${await new Response(proc.stderr).text()}`)
    out += decoder.decode(value)
    url = /listening on (http:\/\/[0-9.]+:[0-9]+)/.exec(out)?.[1] ?? ''
  }
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      // Past the start-up lines the request log is drained, not decoded: this
      // process shares the cores with the server it measures. Error lines are
      // counted on the raw bytes of what is not kept (a mark split across two
      // reads would be missed, never invented).
      if (out.length < 64_000) {
        out += decoder.decode(value)
        continue
      }
      const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
      for (let i = bytes.indexOf(ERROR_MARK); i >= 0; i = bytes.indexOf(ERROR_MARK, i + 1)) errorLines++
    }
  })()
  void new Response(proc.stderr).text().then((t) => (out += t))
  return {
    url,
    pid: proc.pid,
    output: () => out,
    errorLines: () => errorLines + (out.match(/"level":"error"/g) ?? []).length,
    stop: async () => {
      proc.kill('SIGTERM')
      await proc.exited
    },
  }
}

export function rssMb(pid: number, field: 'VmRSS' | 'VmHWM'): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) / 1024 : null
  } catch {
    return null
  }
}

const CLOCK_TICKS = Number(Bun.spawnSync(['getconf', 'CLK_TCK']).stdout.toString().trim()) || 100

/** The CPU time (user + system) of a /proc stat line, in microseconds. */
function statCpuUs(stat: string): number {
  // utime and stime are fields 14 and 15 of stat, counted from the state field (3), which follows
  // the name's last ')' (a name may hold ') ' itself).
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS
}

/** CPU time (user + system, all threads) the process has used so far, in microseconds. */
export function cpuUs(pid: number): number | null {
  try {
    return statCpuUs(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return null
  }
}

/** CPU time (user + system) the process's threads named `prefix`... have used so far, in microseconds (0 if none). */
export function threadCpuUs(pid: number, prefix: string): number {
  let us = 0
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8')
        if (stat.slice(stat.indexOf('(') + 1).startsWith(prefix)) us += statCpuUs(stat)
      } catch {
        // the thread ended meanwhile
      }
    }
  } catch {
    // the process ended
  }
  return us
}

/**
 * The machine's CPU time so far, all CPUs, in microseconds: in all, busy (not
 * idle, not waiting for I/O, not stolen) and stolen by the hypervisor.
 */
export function machineCpu(): { total: number; busy: number; steal: number } | null {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    const us = (ticks: number) => (ticks * 1e6) / CLOCK_TICKS
    const total = f.slice(0, 8).reduce((a, b) => a + b, 0)
    const steal = f[7] ?? 0
    return { total: us(total), busy: us(total - (f[3] ?? 0) - (f[4] ?? 0) - steal), steal: us(steal) }
  } catch {
    return null
  }
}

export async function freePort(): Promise<number> {
  const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = s.port
  s.stop(true)
  return port
}

export const round1 = (n: number) => Math.round(n * 10) / 10
