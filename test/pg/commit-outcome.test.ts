/**
 * A COMMIT whose answer is lost (store/pg/storage.ts): the request's answer
 * matches what is stored. Real faults at the moment of COMMIT, injected by the
 * storage's test hook (which runs just before COMMIT is sent):
 *
 * - committed, answer lost: the cluster waits for a synchronous standby that
 *   does not exist, so COMMIT is written locally and then waits; the backend
 *   is terminated during that wait (PostgreSQL: "the transaction has already
 *   committed locally"). The request answers as committed: 200.
 * - aborted: the backend is terminated before COMMIT reaches it. 500, and
 *   nothing of the request is in force.
 * - unreachable: the cluster is stopped (-m immediate) during the wait above,
 *   with the write committed in its WAL. The outcome cannot be asked: 500
 *   (the documented window), and what is stored stays consistent: the send
 *   is `sending` with its debit, and recovery refunds it once.
 *
 * Runs when OTPD_TEST_DATABASE=postgres, on a cluster of its own.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { RECOVERY_MARGIN_MS } from '../../src/otp/recovery.ts'
import type { CommitPoint, PgStorage } from '../../src/store/pg/storage.ts'
import { harnessPerTest, ON_PG, type Harness } from '../kit/harness.ts'
import { startCluster, type PgCluster } from '../kit/pg-cluster.ts'

setDefaultTimeout(60_000)

const PHONE = '+14155550123'
let cluster: PgCluster | undefined
let h: Harness | undefined
const harness = harnessPerTest()
afterAll(() => cluster?.destroy())

/** A harness on a fresh database of this file's cluster, whose connections commit without waiting for a standby unless told to. */
async function start(): Promise<{ h: Harness; storage: PgStorage; db: string }> {
  cluster ??= startCluster()
  if (!cluster.running()) cluster.start()
  const url = await cluster.freshDatabase('commit_outcome')
  const db = new URL(url).pathname.slice(1)
  await cluster.psql(`ALTER DATABASE ${db} SET synchronous_commit = local`)
  h = await harness({ databaseUrl: url, credits: 10 })
  return { h, storage: h.server.storage as PgStorage, db }
}

/** From now on a COMMIT with synchronous_commit = on waits for a standby that never comes. */
async function standbyNeverAnswers(on: boolean): Promise<void> {
  await cluster!.psql(on ? "ALTER SYSTEM SET synchronous_standby_names = 'otpd_test_nobody'" : 'ALTER SYSTEM RESET synchronous_standby_names')
  await cluster!.psql('SELECT pg_reload_conf()')
}

/** True when the transaction about to commit wrote a row of `table` matching `where` (so a hook fires on the request's own write only). */
async function wrote(at: CommitPoint, table: string, where: string): Promise<boolean> {
  const rows = await at.tx.q(`SELECT 1 FROM ${table} WHERE xmin::text = $1 AND ${where}`, [at.xid])
  return rows.length > 0
}

/** Once the backend waits for the standby (its COMMIT written locally), runs `then`. */
async function whenCommitWaits(pid: number, then: () => Promise<void> | void): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const rows = await h!.sql("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event = 'SyncRep'", [pid])
    if (rows.length > 0) return void (await then())
    await Bun.sleep(10)
  }
  throw new Error(`backend ${pid} never waited for the standby`)
}

async function balance(h: Harness): Promise<number> {
  return Number((await h.sql('SELECT coalesce(sum(balance), 0) AS balance FROM account_balances'))[0]!.balance)
}

describe.skipIf(!ON_PG)('a COMMIT whose answer is lost', () => {
  test('verify: committed, backend terminated while COMMIT waits: 200 verified, and the code is used', async () => {
    const { h, storage } = await start()
    const sent = await h.send({ channel: 'sms', recipient: PHONE })
    expect(sent.status).toBe(200)
    const id = sent.json.verification_id as string
    const code = h.delivery.lastCode()
    await standbyNeverAnswers(true)
    let fired = 0
    let killer: Promise<void> | undefined
    storage.beforeCommit = async (at) => {
      if (!(await wrote(at, 'verifications', 'used_at IS NOT NULL'))) return
      fired++
      await at.tx.q('SET LOCAL synchronous_commit = on')
      killer = whenCommitWaits(at.pid, async () => void (await h.sql('SELECT pg_terminate_backend($1)', [at.pid])))
    }
    const res = await h.verify({ verification_id: id, code })
    await killer
    storage.beforeCommit = undefined
    await standbyNeverAnswers(false)
    expect(fired).toBe(1)
    expect(res.status).toBe(200)
    expect(res.json.verified).toBe(true)
    const row = (await h.sql('SELECT used_at FROM verifications WHERE id = $1', [id]))[0]!
    expect(row.used_at).not.toBeNull()
    // The stored state answers the next attempt: the code was used.
    expect((await h.verify({ verification_id: id, code })).json.verified).not.toBe(true)
  })

  test('send: committed, backend terminated while COMMIT waits: 200, and the answered verification is stored with its debit', async () => {
    const { h, storage } = await start()
    await standbyNeverAnswers(true)
    let killer: Promise<void> | undefined
    storage.beforeCommit = async (at) => {
      if (!(await wrote(at, 'verifications', "delivery = 'sending'"))) return
      storage.beforeCommit = undefined
      await at.tx.q('SET LOCAL synchronous_commit = on')
      killer = whenCommitWaits(at.pid, async () => void (await h.sql('SELECT pg_terminate_backend($1)', [at.pid])))
    }
    const res = await h.send({ channel: 'sms', recipient: PHONE })
    await killer
    await standbyNeverAnswers(false)
    expect(res.status).toBe(200)
    const id = res.json.verification_id as string
    expect(h.delivery.sent.map((m) => m.verificationId)).toEqual([id])
    expect((await h.sql('SELECT count(*)::int AS n FROM verifications WHERE id = $1', [id]))[0]!.n).toBe(1)
    expect(await balance(h)).toBe(9)
    // The code delivered is the stored one.
    expect((await h.verify({ verification_id: id, code: h.delivery.lastCode() })).json.verified).toBe(true)
  })

  test('verify and send: backend terminated before COMMIT: 500, nothing in force', async () => {
    const { h, storage } = await start()
    const sent = await h.send({ channel: 'sms', recipient: PHONE })
    const id = sent.json.verification_id as string
    const code = h.delivery.lastCode()
    storage.beforeCommit = async (at) => {
      if (!(await wrote(at, 'verifications', 'used_at IS NOT NULL'))) return
      storage.beforeCommit = undefined
      await h.sql('SELECT pg_terminate_backend($1)', [at.pid])
    }
    const res = await h.verify({ verification_id: id, code })
    expect(res.status).toBe(500)
    expect((await h.sql('SELECT used_at FROM verifications WHERE id = $1', [id]))[0]!.used_at).toBeNull()
    expect((await h.verify({ verification_id: id, code })).json.verified).toBe(true)

    storage.beforeCommit = async (at) => {
      if (!(await wrote(at, 'verifications', "delivery = 'sending'"))) return
      storage.beforeCommit = undefined
      await h.sql('SELECT pg_terminate_backend($1)', [at.pid])
    }
    const before = await balance(h)
    const count = (await h.sql('SELECT count(*)::int AS n FROM verifications'))[0]!.n
    const delivered = h.delivery.sent.length
    const failed = await h.send({ channel: 'sms', recipient: '+14155550124' })
    expect(failed.status).toBe(500)
    expect(await balance(h)).toBe(before)
    expect((await h.sql('SELECT count(*)::int AS n FROM verifications'))[0]!.n).toBe(count)
    expect(h.delivery.sent.length).toBe(delivered)
  })

  test('shared writes: committed, backend terminated while their one COMMIT waits: every one resolves, each landed once', async () => {
    const { h, storage } = await start()
    await standbyNeverAnswers(true)
    let killer: Promise<void> | undefined
    let commits = 0
    storage.beforeCommit = async (at) => {
      commits++
      storage.beforeCommit = undefined
      await at.tx.q('SET LOCAL synchronous_commit = on')
      killer = whenCommitWaits(at.pid, async () => void (await h.sql('SELECT pg_terminate_backend($1)', [at.pid])))
    }
    const names = ['shared-a', 'shared-b', 'shared-c']
    const made = await Promise.all(names.map((n) => storage.writeShared(async (r) => (await r.admin.insertAccount(n, h.clock.now())).name)))
    await killer
    await standbyNeverAnswers(false)
    expect(commits).toBe(1)
    expect(made).toEqual(names)
    const rows = await h.sql("SELECT count(*)::int AS n, count(DISTINCT xmin::text)::int AS transactions FROM accounts WHERE name LIKE 'shared-%'")
    expect(rows[0]).toEqual({ n: 3, transactions: 1 })
  })

  test('shared writes: the database stops while their COMMIT waits: every one rejects as possibly in force, none runs again', async () => {
    const { h, storage } = await start()
    storage.resolveWithinMs = 1_000
    await standbyNeverAnswers(true)
    let stopper: Promise<void> | undefined
    let commits = 0
    storage.beforeCommit = async (at) => {
      if (commits++ > 0) return
      await at.tx.q('SET LOCAL synchronous_commit = on')
      stopper = whenCommitWaits(at.pid, () => cluster!.stop('immediate'))
    }
    const names = ['shared-a', 'shared-b', 'shared-c']
    const made = await Promise.allSettled(names.map((n) => storage.writeShared(async (r) => (await r.admin.insertAccount(n, h.clock.now())).name)))
    await stopper
    storage.beforeCommit = undefined
    expect(commits).toBe(1)
    expect(made.map((x) => (x.status === 'rejected' ? x.reason.constructor.name : x.status))).toEqual(Array(3).fill('PgCommitUnknownError'))
    cluster!.start()
    await standbyNeverAnswers(false)
    // In force after all, once each: the window the error names.
    expect(await h.sql("SELECT name FROM accounts WHERE name LIKE 'shared-%' ORDER BY name")).toEqual(names.map((name) => ({ name })))
  })

  test('send: the database stops while COMMIT waits, the write durable in its WAL: 500 (the window), the send stays sending, recovery refunds it once', async () => {
    const { h, storage } = await start()
    storage.resolveWithinMs = 1_000
    await standbyNeverAnswers(true)
    let stopper: Promise<void> | undefined
    storage.beforeCommit = async (at) => {
      if (!(await wrote(at, 'verifications', "delivery = 'sending'"))) return
      storage.beforeCommit = undefined
      await at.tx.q('SET LOCAL synchronous_commit = on')
      stopper = whenCommitWaits(at.pid, () => cluster!.stop('immediate'))
    }
    const res = await h.send({ channel: 'sms', recipient: PHONE })
    await stopper
    expect(res.status).toBe(500)
    expect(h.delivery.sent).toEqual([])
    expect(h.logs.join('\n')).toContain('could not be asked within 1000 ms')
    cluster!.start()
    await standbyNeverAnswers(false)
    // In force after all (the window docs/multi-node.md#a-commit-whose-answer-is-lost names): recorded sending, with its debit.
    const rows = await h.sql('SELECT id, delivery FROM verifications WHERE test_mode IS NULL')
    expect(rows.map((r) => r.delivery)).toEqual(['sending'])
    expect(await balance(h)).toBe(9)
    // Recovery settles it: unknown and refunded, once.
    h.clock.advance(h.server.config.delivery.timeout_ms + RECOVERY_MARGIN_MS + 1)
    expect(await h.server.recover()).toBe(1)
    expect(await h.server.recover()).toBe(0)
    expect((await h.sql('SELECT delivery FROM verifications WHERE id = $1', [rows[0]!.id]))[0]!.delivery).toBe('unknown')
    expect(await balance(h)).toBe(10)
  })
})
