/**
 * The crash suite on PostgreSQL (docs/reliability.md): three `otpd serve` nodes on one
 * throwaway cluster (scripts/kit/pg-cluster.ts) under mixed load (sends,
 * right and wrong codes, lockouts) from concurrent clients spread over the
 * nodes, with operator credit grants from the CLI now and then. Again and
 * again one node, picked at random, is killed with SIGKILL (sometimes during
 * its start-up) while the others go on; after every kill the database is
 * checked against everything the clients were told (scripts/kit/ledger.ts),
 * and the node is started again. At the end, once recovery has had its turn,
 * no send may be left unsettled.
 *
 * Usage: bun scripts/proofs/crash-pg.ts [--kills=30] [--clients=9] [--seed=N]
 * Exits 1 on any violation.
 */
import { cliAsync, cliJson, numberArg, prng, report, seedFromArgs, sleep, spawnServer, unthrottledNoop, type ServerProc } from '../kit/otpd.ts'
import { sharedCluster } from '../kit/pg-cluster.ts'
import { ledgerViolations } from '../kit/ledger.ts'
import { startLoad } from '../kit/pg-load.ts'
import { pgEnv, startNodes, stopNodes } from '../kit/pg-nodes.ts'

const KILLS = numberArg('kills', 30)
const CLIENTS = numberArg('clients', 9)
const SEED = seedFromArgs()
const rand = prng(SEED)
const NODES = 3

const url = await sharedCluster().freshDatabase('crash')
const env = pgEnv(
  'crash-pg',
  url,
  `${unthrottledNoop(['sms'], 'recipient_failures_per_day = 1000000000\nmax_failed_attempts = 2\nlockout_seconds = 3600\n')}[delivery]\ntimeout_ms = 1000\n`,
)
const key = cliJson(env, 'keys', 'create', '--init', '--name', 'crash').key as string
cliJson(env, 'credits', 'add', '1000000')
const nodes: ServerProc[] = await startNodes(env, NODES)
const targets = new Map(nodes.map((n, i) => [i, n.url]))
const load = startLoad(key, targets, CLIENTS)
load.ack.granted = 1_000_000
const violations: string[] = []
const pending: Promise<void>[] = []
let checks = 0
let killsAtStart = 0
let grants = 0
const started = Date.now()

for (let k = 0; k < KILLS; k++) {
  await sleep(300 + rand() * 1200)
  const victim = Math.floor(rand() * NODES)
  if (k % 5 === 2) {
    pending.push(
      cliAsync(env, 'credits', 'add', '7', '--note', `crash ${k}`).then((r) => {
        if (r.code === 0) {
          load.ack.granted += 7
          grants++
        } else violations.push(`credits add exited ${r.code}: ${r.stderr.trim()}`)
      }),
    )
  }
  targets.delete(victim)
  nodes[victim]!.proc.kill('SIGKILL')
  await nodes[victim]!.proc.exited
  // Answers already received are acknowledged: check them while the others go on.
  const v = await ledgerViolations(url, load.ack)
  checks++
  violations.push(...v.map((x) => `after kill ${k + 1}: ${x}`))
  const { proc, listening } = spawnServer(env)
  if (rand() < 0.15) {
    // Killed again during its start-up (migrations check, secret, first recovery).
    await sleep(rand() * 300)
    proc.kill('SIGKILL')
    await proc.exited
    killsAtStart++
    const again = spawnServer(env)
    nodes[victim] = await again.listening
  } else nodes[victim] = await listening
  targets.set(victim, nodes[victim]!.url)
  if (violations.length > 20) break
  if ((k + 1) % 10 === 0)
    console.log(`${k + 1} kills, ${load.answers.length} answers, ${violations.length} violations, ${Math.round((Date.now() - started) / 1000)} s`)
}
await load.stop()
await Promise.all(pending)
// Recovery (every 5 s, for sends older than the 1 s delivery budget + 2 s) settles what the killed nodes left.
await sleep(9_000)
const last = await ledgerViolations(url, load.ack, { settledAfterMs: 9_000 })
checks++
violations.push(...last.map((x) => `final: ${x}`))
const odd = load.answers.filter(
  (a) => a.status !== 200 && a.status !== 'network' && !(a.status === 429 && String(a.body.message).startsWith('Too many failed attempts')),
)
for (const a of odd.slice(0, 10)) violations.push(`${a.what} answered ${a.status} ${JSON.stringify(a.body)}`)
await stopNodes(nodes)
env.close()

report(
  'crash safety on PostgreSQL, one of three nodes killed',
  {
    seed: SEED,
    'kill -9': `${KILLS + killsAtStart} (${killsAtStart} of them during start-up)`,
    clients: CLIENTS,
    answers: load.answers.length,
    'requests cut by a kill': load.answers.filter((a) => a.status === 'network').length,
    'acknowledged sends': load.ack.sends.size,
    'acknowledged verified': load.ack.verified.size,
    'verifications with acknowledged Invalid code': load.ack.invalid.size,
    'acknowledged lockouts': load.ack.locked.size,
    'CLI credit grants during load': grants,
    'unexpected answers': odd.length,
    'invariant checks (whole database each)': checks,
    'elapsed (s)': Math.round((Date.now() - started) / 1000),
  },
  violations,
)
