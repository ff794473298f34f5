/**
 * Faults with PostgreSQL (docs/multi-node.md), on real `otpd serve` processes:
 * - PostgreSQL restarted under load (pg_ctl stop -m fast, then -m immediate):
 *   requests during the outage get the documented 500 and leave nothing in
 *   force, /readyz answers 503, and every node serves again within seconds of
 *   the database's return, without being restarted;
 * - one of three nodes killed with -9 under load, three times: the others go
 *   on, every acknowledged outcome and the ledger invariants hold;
 * - a pool of 2 connections under 100 concurrent requests: they wait, none fails.
 * Runs when OTPD_TEST_DATABASE=postgres. The restart test has a cluster of its
 * own (it stops it); the others use the process's shared one.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import {
  cliAsync,
  cliJson,
  post,
  runFromSource,
  spawnServer,
  unthrottledNoop,
  type OtpdEnv,
  type ServerProc,
  inForceUnacknowledged,
  ledgerViolations,
  pgEnv,
  startNodes,
  stopNodes,
  startLoad,
} from '../kit/processes.ts'
import { freshDatabase, startCluster, type PgCluster } from '../kit/pg-cluster.ts'
import { waitFor } from '../kit/wait-for.ts'
import { READY_CACHE_MS } from '../../src/app/index.ts'

setDefaultTimeout(180_000)
runFromSource()

const ON_PG = process.env.OTPD_TEST_DATABASE === 'postgres'
/** Short delivery budget: recovery settles a send whose outcome was lost after 1 s + 2 s margin (otp/recovery.ts), checked every 5 s. */
// Wrong codes lock a verification after 2 failures, for an hour: every acknowledged lockout must still hold at the check.
const TOML = `${unthrottledNoop(['sms'], 'recipient_failures_per_day = 1000000000\nmax_failed_attempts = 2\nlockout_seconds = 3600\n')}[delivery]\ntimeout_ms = 1000\n`
const lockout = (a: { status: number | string; body: Record<string, unknown> }) =>
  a.status === 429 && String(a.body.message ?? a.body.error).startsWith('Too many failed attempts')
const SETTLE_MS = 9_000

const nodes: ServerProc[] = []
const envs: OtpdEnv[] = []
const clusters: PgCluster[] = []
afterAll(async () => {
  await stopNodes(nodes)
  envs.forEach((e) => e.close())
  clusters.forEach((c) => c.destroy())
})

async function setUp(name: string, url: string, count: number, database = ''): Promise<{ env: OtpdEnv; key: string; started: ServerProc[] }> {
  const env = pgEnv(name, url, TOML, { database })
  envs.push(env)
  const started = await startNodes(env, count)
  nodes.push(...started)
  const key = cliJson(env, 'keys', 'create', '--init').key as string
  cliJson(env, 'credits', 'add', '1000000')
  return { env, key, started }
}

const readyz = async (url: string) => {
  try {
    return (await fetch(url + '/readyz', { signal: AbortSignal.timeout(5000) })).status
  } catch {
    return 0
  }
}

describe.skipIf(!ON_PG)('PostgreSQL faults', () => {
  for (const mode of ['fast', 'immediate'] as const) {
    test(`PostgreSQL stopped (-m ${mode}) and started under load: 500 and 503 meanwhile, nothing in force, recovery without a restart`, async () => {
      const cluster = startCluster()
      clusters.push(cluster)
      const url = await cluster.freshDatabase()
      const { key, started } = await setUp(`pgrestart-${mode}`, url, 2)
      const load = startLoad(key, new Map(started.map((n, i) => [i, n.url])))
      await waitFor(() => load.answers.some((a) => a.status === 200 && a.at < Date.now() - 500), { what: 'the load to be served', ms: 15_000 })
      const stoppedAt = Date.now()
      cluster.stop(mode)
      const downFrom = Date.now()
      // Down: both nodes say so once a readiness answered before the stop is out of their cache
      // (a fixed wait: that bound is what is checked).
      await Bun.sleep(Math.max(0, downFrom + READY_CACHE_MS - Date.now()))
      for (const n of started) expect(await readyz(n.url)).toBe(503)
      await waitFor(() => load.answers.filter((a) => a.at >= downFrom && a.at < Date.now() - 200).length >= 50, {
        what: '50 requests while PostgreSQL is down',
        ms: 15_000,
      })
      const upAt = Date.now()
      cluster.start()
      const back = await Promise.all(
        started.map(async (n) => {
          for (;;) {
            const ok = (await readyz(n.url)) === 200 && (await post(n.url, '/api/v1/send', key, { channel: 'sms', recipient: '+15550100001' })).status === 200
            if (ok) return Date.now() - upAt
            if (Date.now() - upAt > 20_000) return Infinity
            await Bun.sleep(100)
          }
        }),
      )
      await waitFor(() => started.every((_, i) => load.answers.filter((a) => a.node === i && a.at > upAt && a.status === 200).length >= 10), {
        what: '10 answers 200 from each node after the restart',
        ms: 15_000,
      })
      await load.stop()
      // The same processes serve again, within seconds of the database's return.
      for (const n of started) expect(n.proc.exitCode).toBeNull()
      expect(Math.max(...back)).toBeLessThan(10_000)

      // While it was down (after the stop returned, before the start began) only the documented 500.
      const during = load.answers.filter((a) => a.at >= downFrom && a.at < upAt)
      expect(during.length).toBeGreaterThan(0)
      // docs/api.md#errors: send's 500 says `Failed to send verification`, verify's `Internal server error`.
      const documented = { send: 'Failed to send verification', verify: 'Internal server error' }
      const off = during.filter((a) => (a.status !== 500 || a.body.error !== documented[a.what]) && !lockout(a))
      expect(off.map((a) => `${a.what} ${a.status} ${JSON.stringify(a.body)}`)).toEqual([])
      // Nothing else anywhere but 200 and that 500.
      expect(load.answers.filter((a) => a.status !== 200 && a.status !== 500 && !lockout(a)).map((a) => `${a.what} ${a.status}`)).toEqual([])
      expect(load.answers.filter((a) => a.at < stoppedAt - 500 && a.status === 200).length).toBeGreaterThan(0)

      // After recovery has had its turn: every 200 holds, no 500 left a charge in force, the ledger balances.
      // A fixed wait: recovery runs on its own timer in the nodes, and what it left is the check.
      await Bun.sleep(SETTLE_MS)
      expect(await ledgerViolations(url, load.ack, { settledAfterMs: SETTLE_MS })).toEqual([])
      expect((await inForceUnacknowledged(url, load.ack.sends.keys())).map((r) => `${r.id} ${r.delivery}`)).toEqual([])
    })
  }

  test('one of three nodes killed with -9 under load, three times: the others go on, acknowledged outcomes and the ledger hold', async () => {
    const url = await freshDatabase('killnode')
    const { env, key, started } = await setUp('pgkill', url, 3)
    const targets = new Map(started.map((n, i) => [i, n.url]))
    const load = startLoad(key, targets, 9)
    load.ack.granted = 1_000_000
    const grants: Promise<void>[] = []
    const current = [...started]
    for (let k = 0; k < 3; k++) {
      // Every node (the one restarted last round too) serves before the next kill.
      const from = Date.now()
      await waitFor(() => [...targets.keys()].every((i) => load.answers.some((a) => a.node === i && a.at >= from && a.status === 200)), {
        what: 'every node to serve the load',
        ms: 15_000,
      })
      const victim = k % 3
      // An operator grants credits from the CLI while the load runs and a node dies.
      grants.push(
        cliAsync(env, 'credits', 'add', '7', '--note', `kill ${k}`).then((r) => {
          expect(r.code).toBe(0)
          load.ack.granted += 7
        }),
      )
      targets.delete(victim)
      current[victim]!.proc.kill('SIGKILL')
      await current[victim]!.proc.exited
      const killedAt = Date.now()
      await waitFor(() => [...targets.keys()].every((i) => load.answers.filter((a) => a.node === i && a.at > killedAt && a.status === 200).length >= 20), {
        what: '20 answers 200 from each survivor after the kill',
        ms: 15_000,
      })
      // The survivors answered 200s after the kill.
      for (const [i] of targets) {
        const after = load.answers.filter((a) => a.node === i && a.at > killedAt)
        expect(after.filter((a) => a.status === 200).length).toBeGreaterThan(0)
        expect(after.filter((a) => a.status !== 200 && !lockout(a))).toEqual([])
      }
      const { proc, listening } = spawnServer(env)
      void proc
      const again = await listening
      nodes.push(again)
      current[victim] = again
      targets.set(victim, again.url)
    }
    const { ack } = load
    await waitFor(() => ack.sends.size > 100 && ack.verified.size > 10 && ack.invalid.size > 5 && ack.locked.size > 2, {
      what: 'the load to reach the counts checked below',
      ms: 30_000,
    })
    await load.stop()
    await Promise.all(grants)
    // Only the killed nodes' cut requests failed, and only as cut connections.
    expect(load.answers.filter((a) => a.status !== 200 && a.status !== 'network' && !lockout(a)).map((a) => `${a.what} ${a.status}`)).toEqual([])
    // A fixed wait: recovery runs on its own timer in the nodes, and what it left is the check.
    await Bun.sleep(SETTLE_MS)
    expect(await ledgerViolations(url, load.ack, { settledAfterMs: SETTLE_MS })).toEqual([])
    expect(load.ack.sends.size).toBeGreaterThan(100)
    expect(load.ack.verified.size).toBeGreaterThan(10)
    expect(load.ack.invalid.size).toBeGreaterThan(5)
    expect(load.ack.locked.size).toBeGreaterThan(2)
  })

  test('a pool of 2 connections and 100 concurrent requests: they wait, none fails', async () => {
    const url = await freshDatabase('smallpool')
    const { key, started } = await setUp('pgpool', url, 1, 'pool_size = 2')
    const node = started[0]!
    const sends = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        post(node.url, '/api/v1/send', key, { channel: 'sms', recipient: `+1415666${String(i).padStart(4, '0')}`, code: '135790' }),
      ),
    )
    expect(sends.map((s) => s.status)).toEqual(Array(100).fill(200))
    const verifies = await Promise.all(sends.map((s) => post(node.url, '/api/v1/verify', key, { verification_id: s.json.verification_id, code: '135790' })))
    expect(verifies.filter((v) => v.status === 200 && v.json.verified === true)).toHaveLength(100)
    // And a mixed burst with the readiness probe in it.
    const mixed = await Promise.all([
      ...Array.from({ length: 50 }, (_, i) => post(node.url, '/api/v1/send', key, { channel: 'sms', recipient: `+1415777${String(i).padStart(4, '0')}` })),
      ...Array.from({ length: 50 }, () => readyz(node.url).then((status) => ({ status }))),
    ])
    expect(mixed.map((m) => m.status)).toEqual(Array(100).fill(200))
    expect(await ledgerViolations(url)).toEqual([])
  })
})
