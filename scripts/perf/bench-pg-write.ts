#!/usr/bin/env bun
/**
 * The PostgreSQL engine's write path alone (store/pg/storage.ts and the
 * stores), without HTTP: send's first transaction and verify's transaction,
 * made by the real repositories with the statements the domain makes
 * (otp/send.ts, otp/verify.ts, otp/key-limiter.ts), on one database.
 *
 * - `send`: key lock, key window, key hit, code length, recipient lock and
 *   window, a number, the signedIn debit, the insert;
 * - `verify`: key lock, window and hit, the verification's row lock,
 *   recipient lock and failure window, the single-use mark.
 *
 * Usage: bun scripts/perf/bench-pg-write.ts [postgres://... | --cluster] [--ops 3000] [--keys 16] [--concurrency 32]
 * With --cluster (the default) it starts a throwaway cluster. Prints each
 * shape's transactions per second and mean latency; run it on two commits
 * against one URL to compare them.
 */
import { SQL } from 'bun'
import { startCluster } from '../kit/pg-cluster.ts'
import { applyMigrations } from '../../src/store/pg/migrate.ts'
import { PgStorage } from '../../src/store/pg/storage.ts'
import type { Repos } from '../../src/otp/ports/index.ts'

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(name)
  return i > 0 ? Number(process.argv[i + 1]) : def
}
const OPS = arg('--ops', 3000)
const KEYS = arg('--keys', 16)
const CONCURRENCY = arg('--concurrency', 32)
const given = process.argv[2]?.startsWith('postgres') ? process.argv[2] : undefined
const cluster = given ? undefined : startCluster()

try {
  const url = given ?? (await cluster!.freshDatabase('bench_write'))
  const sql = new SQL({ url, max: 10, connection: { default_transaction_isolation: 'read committed' } })
  await applyMigrations(sql, 'bench')
  const storage = new PgStorage(sql)
  const now = Date.now()
  const keys = await storage.write(async (r) => {
    const account = (await r.admin.findAccount('bench')) ?? (await r.admin.insertAccount('bench', now))
    await r.credits.post({ accountId: account.id, kind: 'grant', amount: 1_000_000_000, at: now })
    const ids: number[] = []
    for (let k = 0; k < KEYS; k++)
      ids.push(await r.admin.insertKey({ accountId: account.id, name: `k${k}-${now}`, prefix: `b${now}${k}`, keyHash: `x${now}-${k}`, at: now }))
    return { accountId: account.id, ids }
  })

  let seq0 = 0
  const recipient = (i: number) => {
    const h = new Uint8Array(16)
    new DataView(h.buffer).setUint32(0, i * 2654435761)
    new DataView(h.buffer).setUint32(4, now & 0xffffffff)
    return h
  }
  const made: { seq: number; id: string; keyId: number; hash: Uint8Array }[] = []

  const keyAdmit = async (r: Repos, keyId: number, at: number) => {
    await r.keyHits.nthLatest(keyId, 120)
    await r.keyHits.record(keyId, at)
    await r.keys.touch(keyId, at)
  }
  const send = (i: number) =>
    storage.write(async (r) => {
      const keyId = keys.ids[i % KEYS]!
      const at = Date.now()
      await keyAdmit(r, keyId, at)
      await r.credits.codeLength(keys.accountId)
      const hash = recipient(i)
      await r.verifications.recipientSendTimes(hash, at - 86_400_000)
      const seq = await r.verifications.nextSeq()
      const id = `bench${now}-${seq}-${seq0++}`
      if (!(await r.credits.debit({ accountId: keys.accountId, amount: 1, verificationId: id, at }))) throw new Error('no credits')
      await r.verifications.insert({
        seq,
        id,
        keyId,
        accountId: keys.accountId,
        channel: 'sms',
        recipientHash: hash,
        recipientMask: '+1***',
        codeHash: new Uint8Array(32),
        testMode: null,
        status: 'active',
        charged: true,
        createdAt: at,
        expiresAt: at + 300_000,
        usedAt: null,
        failedAttempts: 0,
        lockedUntil: null,
        delivery: 'sending',
        deliveryProvider: null,
        deliveryUpdatedAt: at,
      })
      made.push({ seq, id, keyId, hash })
    })
  const verify = (i: number) =>
    storage.write(async (r) => {
      const m = made[i]!
      const at = Date.now()
      await keyAdmit(r, m.keyId, at)
      const v = await r.verifications.findForKey(m.id, m.seq, m.keyId)
      if (!v) throw new Error('not found')
      await r.failures.nthLatest(v.recipientHash, 1000)
      await r.verifications.markUsed(v.seq, at)
    })

  const rate = async (n: number, op: (i: number) => Promise<unknown>) => {
    let next = 0
    const start = performance.now()
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < n) await op(next++)
      }),
    )
    const s = (performance.now() - start) / 1000
    return { perSecond: n / s, meanMs: (s * 1000 * CONCURRENCY) / n }
  }
  await rate(300, send) // warm: connections, prepared statements
  made.length = 0
  const s = await rate(OPS, send)
  const v = await rate(OPS, verify)
  const f = (x: { perSecond: number; meanMs: number }) => `${x.perSecond.toFixed(0).padStart(6)}/s (${x.meanMs.toFixed(2)} ms each)`
  console.log(`send txn ${f(s)}   verify txn ${f(v)}   (${KEYS} keys, ${CONCURRENCY} in flight, pool 10)`)
  await sql.close()
} finally {
  cluster?.destroy()
}
