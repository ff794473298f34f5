/**
 * A /readyz flood (16 clients for 5 s): readiness is read-only, so neither
 * the WAL nor the database file grows with the probes.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { statSync } from 'node:fs'
import { call, cleanUpAfterAll, faultConfig, makeFaultEnv, provision, send, serve, stop } from '../kit/fault-harness.ts'
import { ledgerViolations, sends } from '../kit/processes.ts'
import { sqliteOnly } from '../kit/harness.ts'

cleanUpAfterAll()
setDefaultTimeout(40_000)

const size = (path: string) => {
  try {
    return statSync(path).size
  } catch {
    return 0
  }
}

sqliteOnly('a /readyz flood', () => {
  test('16 clients for 5 s: the WAL stays under 64 MB and the database file grows by a few pages at most', async () => {
    const env = makeFaultEnv('readyz', faultConfig(1000))
    const key = provision(env)
    const s = await serve(env)
    const ok = await send(s.url, key)
    expect(ok.status).toBe(200)
    // Let the start-up writes settle into the file first.
    await Bun.sleep(1500)
    const dbBefore = size(env.dbPath)
    let walMax = size(`${env.dbPath}-wal`)
    const statuses = new Map<number, number>()
    const until = Date.now() + 5000
    const watch = setInterval(() => (walMax = Math.max(walMax, size(`${env.dbPath}-wal`))), 50)
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (Date.now() < until) {
          const r = await call(s.url, '/readyz', { timeoutMs: 5000 })
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
        }
      }),
    )
    clearInterval(watch)
    walMax = Math.max(walMax, size(`${env.dbPath}-wal`))
    const probes = [...statuses.values()].reduce((a, b) => a + b, 0)
    expect(probes).toBeGreaterThan(500)
    expect([...statuses.keys()]).toEqual([200])
    expect(walMax).toBeLessThan(64 << 20)
    const pageSize = 4096
    expect(size(env.dbPath) - dbBefore).toBeLessThanOrEqual(4 * pageSize)
    expect(await ledgerViolations(env.dbPath, sends([ok.json.verification_id]))).toEqual([])
    expect(await stop(s)).toBe(0)
  })
})
