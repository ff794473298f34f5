/**
 * The process stops while a delivery is under way: SIGTERM lets the send
 * finish and answers it; kill -9 leaves it `sending`, and recovery after the
 * restart refunds it as `unknown` while its code stays verifiable (the
 * message may have reached the user).
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { cleanUpAfterAll, faultConfig, makeFaultEnv, provision, send, serve, startGateway, stop, verify, webhookProvider } from '../kit/fault-harness.ts'
import { holds, waitFor } from '../kit/wait-for.ts'
import { ledgerViolations, rowOf, sends } from '../kit/processes.ts'
import { sqliteOnly } from '../kit/harness.ts'

cleanUpAfterAll()
setDefaultTimeout(40_000)

sqliteOnly('SIGTERM during an 8 s delivery', () => {
  test('the in-flight send is answered 200 after its delivery, then the process exits 0; the row is accepted', async () => {
    const gw = startGateway()
    // The stop grace is longer than the delivery timeout, so a delivery within it finishes.
    const env = makeFaultEnv('sigterm', faultConfig(10_000, webhookProvider(gw)))
    const key = provision(env)
    const s = await serve(env)
    gw.respond = () => Bun.sleep(8000).then(() => new Response(null, { status: 204 }))
    const pending = send(s.url, key, 20_000)
    await waitFor(() => gw.delivered.length === 1, { what: 'the gateway to take the message', ms: 5000 })
    const signalledAt = performance.now()
    s.proc.kill('SIGTERM')
    const answer = await pending
    expect(answer.status).toBe(200)
    expect(performance.now() - signalledAt).toBeGreaterThan(6000)
    const id = answer.json.verification_id as string
    expect(id).toBe(gw.delivered[0]!.verificationId)
    const code = await Promise.race([s.proc.exited, Bun.sleep(8000).then(() => null)])
    expect(code).toBe(0)
    expect(await rowOf(env.dbPath, id)).toMatchObject({ delivery: 'accepted', debits: 1, refunds: 0 })
    expect(await ledgerViolations(env.dbPath, sends([id]))).toEqual([])
  })
})

sqliteOnly('kill -9 during delivery', () => {
  test('after a restart the send is refunded as unknown, and its code still verifies before it expires', async () => {
    const TIMEOUT_MS = 1000
    const gw = startGateway()
    const env = makeFaultEnv('kill9', faultConfig(TIMEOUT_MS, webhookProvider(gw)))
    const key = provision(env)
    const s = await serve(env)
    const kept = await send(s.url, key)
    expect(kept.status).toBe(200)
    gw.respond = () => Bun.sleep(5000).then(() => new Response(null, { status: 204 }))
    const pending = send(s.url, key, 10_000)
    await waitFor(() => gw.delivered.length === 2, { what: 'the gateway to take the second message', ms: 5000 })
    const { verificationId: id, code } = gw.delivered[1]!
    expect(code).toMatch(/^\d{6}$/)
    s.proc.kill('SIGKILL')
    expect((await pending).status).toBe(-1)
    await s.proc.exited
    expect(await rowOf(env.dbPath, id)).toMatchObject({ delivery: 'sending', debits: 1, refunds: 0 })

    gw.respond = () => new Response(null, { status: 204 })
    const again = await serve(env)
    const refunded = await holds(async () => (await rowOf(env.dbPath, id))?.refunds === 1, { ms: TIMEOUT_MS + 2000 + 8000, every: 100 })
    expect(await rowOf(env.dbPath, id)).toMatchObject({ delivery: 'unknown', debits: 1, refunds: 1 })
    expect(refunded).toBe(true)
    const verified = await verify(again.url, key, id, code)
    expect(verified.status).toBe(200)
    expect(verified.json.message).toBe('Code verified successfully')
    expect(await ledgerViolations(env.dbPath, sends([kept.json.verification_id]), { settledAfterMs: TIMEOUT_MS + 2000 })).toEqual([])
    expect(await stop(again)).toBe(0)
  })
})
