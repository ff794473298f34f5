/**
 * Faults in the WAL, injected into a real `otpd serve` by the LD_PRELOAD shim
 * (test/kit/fault-shim.c): a flush (fdatasync) that fails is fatal, as in
 * PostgreSQL; a write (pwrite) that fails fails only its requests; a refund
 * that cannot be written is made by recovery later. The database is checked
 * afterwards (scripts/kit/ledger.ts).
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import {
  cleanUpAfterAll,
  exitWithin,
  faultConfig,
  logLines,
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
import { holds, waitFor } from '../kit/wait-for.ts'
import { inForceUnacknowledged, ledgerRows, ledgerViolations, rowOf, sends } from '../kit/processes.ts'
import { sqliteOnly } from '../kit/harness.ts'

cleanUpAfterAll()
setDefaultTimeout(40_000)

/** delivery.timeout_ms in these tests; a send still pending this long + 2 s is stale. */
const TIMEOUT_MS = 1000
const STALE_MS = TIMEOUT_MS + 2000

sqliteOnly('the WAL flush fails', () => {
  test('the process logs the failed flush and exits non-zero unanswered; after a restart recovery refunds what was sending', async () => {
    const gw = startGateway()
    const env = makeFaultEnv('flush', faultConfig(TIMEOUT_MS, webhookProvider(gw)))
    const key = provision(env)
    const s = await serve(env)
    const acked = new Set<string>()
    for (let i = 0; i < 3; i++) {
      const r = await send(s.url, key)
      expect(r.status).toBe(200)
      acked.add(r.json.verification_id)
    }
    const outputBefore = s.output().length

    env.fault('sync', 'otpd.db-wal')
    const answers = await Promise.all(Array.from({ length: 12 }, () => send(s.url, key, 8000)))
    const code = await exitWithin(s, 8000)
    env.clear()
    expect(env.hits()).toBeGreaterThan(0)
    // Exited by itself (not killed), with a failure status.
    expect(code).not.toBeNull()
    expect(s.proc.signalCode).toBeNull()
    expect(code).not.toBe(0)
    // The failed flush is logged (that it is the only error line is checked last).
    const errors = logLines(s, outputBefore).filter((l) => l.level === 'error' || l.level === 'fatal')
    expect(errors.some((l) => /fsync|fdatasync|flush/i.test(JSON.stringify(l)))).toBe(true)
    // Nothing of the batch that was not made durable was answered 200.
    for (const a of answers) expect(a.status === -1 || (a.status === 500 && SEND_500.includes(a.json.error))).toBe(true)

    const again = await serve(env)
    const settled = await holds(async () => (await ledgerRows(env.dbPath)).every((r) => r.delivery !== 'sending'), { ms: STALE_MS + 8000, every: 100 })
    expect(await ledgerViolations(env.dbPath, sends(acked), { settledAfterMs: STALE_MS })).toEqual([])
    expect(settled).toBe(true)
    // What was acknowledged before the fault still holds, delivered and charged; its code verifies.
    expect(await Promise.all([...acked].map(async (id) => (await rowOf(env.dbPath, id))?.delivery))).toEqual([...acked].map(() => 'accepted'))
    const first = [...acked][0]!
    expect((await verify(again.url, key, first, gw.codeOf(first)!)).json.message).toBe('Code verified successfully')
    expect((await send(again.url, key)).status).toBe(200)
    expect(await stop(again)).toBe(0)
    expect(errors.map((l) => `${l.msg} (${l.error})`)).toEqual([expect.stringMatching(/fsync|fdatasync|flush/i)])
  })
})

sqliteOnly('a commit fails for a moment', () => {
  test.each(['EIO', 'ENOSPC'] as const)(
    '(%s) the requests answer 500 with nothing in force; the server keeps running and works again without a restart',
    async (errno) => {
      const gw = startGateway()
      const env = makeFaultEnv('commit', faultConfig(TIMEOUT_MS, webhookProvider(gw)))
      const key = provision(env)
      const s = await serve(env)
      const before = await send(s.url, key)
      expect(before.status).toBe(200)
      const acked = new Set<string>([before.json.verification_id])
      const beforeCode = gw.codeOf(before.json.verification_id)!

      env.fault('write', 'otpd.db-wal', errno)
      const delivered = gw.delivered.length
      const [answers, verifyDuringFault] = await Promise.all([
        Promise.all(Array.from({ length: 10 }, () => send(s.url, key))),
        verify(s.url, key, before.json.verification_id, beforeCode),
      ])
      env.clear()
      expect(env.hits()).toBeGreaterThan(0)
      for (const a of answers) {
        expect(a.status).toBe(500)
        expect(SEND_500).toContain(a.json.error)
      }
      expect(verifyDuringFault.status).toBe(500)
      expect(verifyDuringFault.json.error).toBe('Internal server error')
      // The sends were never recorded, so nothing was delivered and nothing is in force.
      expect(gw.delivered.length).toBe(delivered)
      expect(await inForceUnacknowledged(env.dbPath, acked)).toEqual([])
      expect(s.proc.exitCode).toBeNull()

      // Works again, no restart: the code the failed verify did not use verifies now.
      const after = await send(s.url, key)
      expect(after.status).toBe(200)
      acked.add(after.json.verification_id)
      expect((await verify(s.url, key, before.json.verification_id, beforeCode)).json.message).toBe('Code verified successfully')
      expect((await verify(s.url, key, after.json.verification_id, gw.codeOf(after.json.verification_id)!)).json.message).toBe('Code verified successfully')
      expect(await ledgerViolations(env.dbPath, sends([after.json.verification_id]))).toEqual([])
      expect(await stop(s)).toBe(0)
    },
  )
})

sqliteOnly('the refund fails', () => {
  test('the send answers 500; recovery refunds the debit later, without a restart', async () => {
    const gw = startGateway()
    const env = makeFaultEnv('refund', faultConfig(TIMEOUT_MS, webhookProvider(gw)))
    const key = provision(env)
    const s = await serve(env)
    // The delivery fails, and the WAL cannot be written while the send refunds it.
    gw.respond = () => {
      env.fault('write', 'otpd.db-wal')
      setTimeout(() => env.clear('write'), 300)
      return new Response('gateway down', { status: 500 })
    }
    const failed = await send(s.url, key)
    expect(failed.status).toBe(500)
    expect(failed.json.error).toBe('Failed to send verification')
    expect(gw.delivered).toHaveLength(1)
    await waitFor(() => env.hits() > 0, { what: 'the fault to hit a write' })
    const id = gw.delivered[0]!.verificationId
    const row = await rowOf(env.dbPath, id)
    expect(row?.debits).toBe(1)

    const refunded = await holds(async () => (await rowOf(env.dbPath, id))?.refunds === 1, { ms: STALE_MS + 8000, every: 100 })
    expect(await rowOf(env.dbPath, id)).toMatchObject({ debits: 1, refunds: 1 })
    expect(['unknown', 'failed']).toContain((await rowOf(env.dbPath, id))!.delivery ?? 'NULL')
    expect(refunded).toBe(true)
    expect(s.proc.exitCode).toBeNull()
    gw.respond = () => new Response(null, { status: 204 })
    const ok = await send(s.url, key)
    expect(ok.status).toBe(200)
    // The answer does not wait for the `accepted` record (src/otp/send.ts): it follows.
    await waitFor(async () => (await rowOf(env.dbPath, ok.json.verification_id))?.delivery === 'accepted', {
      what: 'the delivery to be accepted',
      ms: 5000,
      every: 100,
    })
    expect(await ledgerViolations(env.dbPath, sends([ok.json.verification_id]), { settledAfterMs: STALE_MS })).toEqual([])
    expect(await stop(s)).toBe(0)
  })
})
