/**
 * A full disk: the database lives on a small tmpfs, filled by a filler file
 * until writes fail. Sends answer 500 with nothing in force, the storage
 * error is logged a few times rather than once per request, /readyz says
 * 503; once the filler is removed everything works again without a restart.
 * Needs root (mount); the mount is always undone.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import {
  afterServers,
  type Answer,
  call,
  cleanUpAfterAll,
  faultConfig,
  logLines,
  makeFaultEnv,
  provision,
  send,
  SEND_500,
  serve,
  stop,
  verify,
} from '../kit/fault-harness.ts'
import { holds, waitFor } from '../kit/wait-for.ts'
import { inForceUnacknowledged, ledgerRows, ledgerViolations, sends } from '../kit/processes.ts'
import { sqliteOnly } from '../kit/harness.ts'

cleanUpAfterAll()
setDefaultTimeout(60_000)

const TIMEOUT_MS = 1000
const mounts: string[] = []
// Once the servers are dead; a mount still busy is detached lazily.
afterServers(() => {
  for (const m of mounts) if (Bun.spawnSync(['umount', m]).exitCode !== 0) Bun.spawnSync(['umount', '-l', m])
})

function mountTmpfs(dir: string, size: string): void {
  mkdirSync(dir, { recursive: true })
  const p = Bun.spawnSync(['mount', '-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir])
  if (p.exitCode !== 0) throw new Error(`mount -t tmpfs failed (the fault suite runs as root): ${p.stderr.toString()}`)
  mounts.push(dir)
}

/** Writes `path` until the file system is full; returns the bytes written. */
function fill(path: string): number {
  const fd = openSync(path, 'w')
  let total = 0
  try {
    for (const size of [1 << 20, 64 << 10, 4 << 10, 512]) {
      const chunk = Buffer.alloc(size, 0x5a)
      for (;;) {
        try {
          total += writeSync(fd, chunk)
        } catch {
          break
        }
      }
    }
  } finally {
    closeSync(fd)
  }
  return total
}

/** Sends from `clients` loops until `ms` passed. */
async function traffic(url: string, key: string, clients: number, ms: number, acked: Set<string>): Promise<Answer[]> {
  const until = Date.now() + ms
  const answers: Answer[] = []
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (Date.now() < until) {
        const a = await send(url, key, 5000)
        if (a.status === 200) acked.add(a.json.verification_id)
        answers.push(a)
      }
    }),
  )
  return answers
}

sqliteOnly('a full disk', () => {
  test('sends answer 500 with nothing in force, few error lines, /readyz 503; all recovers once space is freed', async () => {
    const holder = makeFaultEnv('disk-full-holder', '')
    const dataDir = join(holder.dir, 'data')
    mountTmpfs(dataDir, '8m')
    const env = makeFaultEnv('disk-full', faultConfig(TIMEOUT_MS), { dbDir: dataDir })
    const key = provision(env)
    const s = await serve(env)
    const acked = new Set<string>()
    const ok = await send(s.url, key)
    expect(ok.status).toBe(200)
    acked.add(ok.json.verification_id)
    expect((await call(s.url, '/readyz')).status).toBe(200)

    const logFrom = s.output().length
    const filler = join(dataDir, 'filler')
    expect(fill(filler)).toBeGreaterThan(1 << 20)
    // Until the WAL must grow, writes may still land in its existing pages.
    await waitFor(async () => (await traffic(s.url, key, 4, 200, acked)).some((a) => a.status === 500), { what: 'a send to fail on the full disk', ms: 5000 })

    // 3 s of failing traffic, /readyz polled meanwhile.
    const readyz: { at: number; status: number }[] = []
    const started = Date.now()
    const [answers] = await Promise.all([
      traffic(s.url, key, 8, 3000, acked),
      (async () => {
        while (Date.now() - started < 3000) {
          readyz.push({ at: Date.now() - started, status: (await call(s.url, '/readyz', { timeoutMs: 2000 })).status })
          await Bun.sleep(100)
        }
      })(),
    ])
    const failures = answers.filter((a) => a.status !== 200)
    expect(failures.length).toBeGreaterThan(50)
    expect(failures.filter((a) => a.status !== 500 || !SEND_500.includes(a.json.error)).slice(0, 3)).toEqual([])
    // The storage error is logged, but not once per failed request (the logger counts repeats).
    const errorLines = logLines(s, logFrom).filter((l) => l.level === 'error')
    expect(errorLines.length).toBeGreaterThanOrEqual(1)
    expect(errorLines.length).toBeLessThanOrEqual(3)
    // 503 once noticed (within ~1 s of the failures starting), and from then on.
    const late = readyz.filter((r) => r.at > 1500)
    expect(late.length).toBeGreaterThan(5)
    expect(late.map((r) => r.status)).toEqual(late.map(() => 503))

    rmSync(filler)
    await waitFor(
      async () => {
        const a = await send(s.url, key)
        if (a.status === 200) acked.add(a.json.verification_id)
        return a.status === 200
      },
      { what: 'a send to succeed once the disk has room', ms: 5000, every: 100 },
    )
    await waitFor(async () => (await call(s.url, '/readyz')).status === 200, { what: '/readyz to answer 200 again', ms: 5000, every: 100 })
    expect(s.proc.exitCode).toBeNull()
    const after = await send(s.url, key)
    expect(after.status).toBe(200)
    acked.add(after.json.verification_id)
    expect((await verify(s.url, key, ok.json.verification_id, '000000')).json.message).toBe('Invalid code')

    // A send whose accepted mark failed is refunded by recovery, without a restart.
    // The check below names what is left unsettled, if anything.
    await holds(async () => (await ledgerRows(env.dbPath)).every((r) => r.delivery !== 'sending'), { ms: TIMEOUT_MS + 2000 + 8000, every: 100 })
    expect(await inForceUnacknowledged(env.dbPath, acked)).toEqual([])
    expect(await ledgerViolations(env.dbPath, sends(acked), { settledAfterMs: TIMEOUT_MS + 2000 })).toEqual([])
    expect(await stop(s)).toBe(0)
  })
})
