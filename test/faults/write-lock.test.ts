/**
 * Another process holds the write lock for 10 s: the server keeps answering
 * (a send waiting for the lock must not stall the event loop), a send that
 * cannot get the lock within `busy_timeout_ms` answers 500 with nothing in
 * force, one that gets it in time succeeds, and all works after the release.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { join } from 'node:path'
import {
  call,
  cleanUpAfterAll,
  faultConfig,
  makeFaultEnv,
  provision,
  send,
  SEND_500,
  serve,
  startGateway,
  stop,
  verify,
  webhookProvider,
} from '../kit/fault-harness.ts'
import { inForceUnacknowledged, ledgerViolations, sends } from '../kit/processes.ts'
import { sqliteOnly } from '../kit/harness.ts'

cleanUpAfterAll()
setDefaultTimeout(40_000)

const HOLD_MS = 10_000
const BUSY_MS = 2000

/** Starts the holder; resolves once it holds the lock, with the time it took it. */
async function holdLock(dbPath: string) {
  const proc = Bun.spawn(['bun', join(import.meta.dir, '..', 'kit', 'hold-lock.ts'), dbPath, String(HOLD_MS)], { stdout: 'pipe', stderr: 'inherit' })
  const reader = proc.stdout.getReader()
  let out = ''
  while (!out.includes('locked')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the lock holder exited: ${out}`)
    out += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  return { proc, lockedAt: performance.now() }
}

sqliteOnly('another process holds the write lock for 10 s', () => {
  test('/healthz stays fast; a send past busy_timeout answers 500 with nothing in force; one within it succeeds', async () => {
    const gw = startGateway()
    const env = makeFaultEnv('lock', faultConfig(1000, webhookProvider(gw)), { database: `busy_timeout_ms = ${BUSY_MS}` })
    const key = provision(env)
    const s = await serve(env)
    const before = await send(s.url, key)
    expect(before.status).toBe(200)
    const acked = new Set<string>([before.json.verification_id])

    const holder = await holdLock(env.dbPath)
    const elapsed = () => performance.now() - holder.lockedAt
    const health: number[] = []
    const polling = (async () => {
      while (elapsed() < HOLD_MS + 500) {
        health.push((await call(s.url, '/healthz', { timeoutMs: 5000 })).ms)
        await Bun.sleep(100)
      }
    })()
    // A fixed wait: the lock is held for HOLD_MS by another process, and this send must start well inside that hold.
    await Bun.sleep(500)
    const delivered = gw.delivered.length
    const blocked = await send(s.url, key, 10_000)
    expect(blocked.status).toBe(500)
    expect(SEND_500).toContain(blocked.json.error)
    // It waited busy_timeout_ms for the lock, no less and not much more.
    expect(blocked.ms).toBeGreaterThan(BUSY_MS - 300)
    expect(blocked.ms).toBeLessThan(BUSY_MS + 1000)
    expect(gw.delivered.length).toBe(delivered)

    // Made when less than busy_timeout of the hold is left: it waits, then succeeds.
    await Bun.sleep(Math.max(0, HOLD_MS - BUSY_MS + 800 - elapsed()))
    const inTime = await send(s.url, key, 10_000)
    expect(elapsed()).toBeGreaterThan(HOLD_MS - 100)
    expect(inTime.status).toBe(200)
    acked.add(inTime.json.verification_id)
    expect(await holder.proc.exited).toBe(0)
    await polling

    expect(health.length).toBeGreaterThan(40)
    expect(health.filter((ms) => ms >= 100)).toEqual([])
    const after = await send(s.url, key)
    expect(after.status).toBe(200)
    acked.add(after.json.verification_id)
    expect((await verify(s.url, key, after.json.verification_id, gw.codeOf(after.json.verification_id)!)).json.message).toBe('Code verified successfully')
    expect(await inForceUnacknowledged(env.dbPath, acked)).toEqual([])
    expect(await ledgerViolations(env.dbPath, sends([before.json.verification_id, inTime.json.verification_id]))).toEqual([])
    expect(await stop(s)).toBe(0)
  })
})
