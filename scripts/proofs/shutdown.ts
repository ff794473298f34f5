/**
 * Shutdown under load (docs/reliability.md): SIGTERM the compiled server while
 * clients send and verify and slow clients are mid-upload, over many rounds
 * (scripts/kit/shutdown-round.ts). Every request the server processed is
 * answered (debits = 200s), in-flight uploads finish, new connections are
 * refused, exit 0, no -wal left, integrity ok.
 *
 * Usage: bun scripts/proofs/shutdown.ts [--rounds=20] [--clients=16] [--seed=N]
 */
import { emptyAcknowledged } from '../kit/ledger.ts'
import { cliJson, makeEnv, numberArg, prng, report, seedFromArgs, unthrottledNoop } from '../kit/otpd.ts'
import { shutdownRound } from '../kit/shutdown-round.ts'

const ROUNDS = numberArg('rounds', 20)
const CLIENTS = numberArg('clients', 16)
const SEED = seedFromArgs()
const rand = prng(SEED)

const env = makeEnv('shutdown', unthrottledNoop())
const key = cliJson(env, 'keys', 'create', '--init').key as string
cliJson(env, 'credits', 'add', '100000000')
const ack = emptyAcknowledged()
ack.granted = 100_000_000

const t = {
  before: 0,
  reset: 0,
  answered: 0,
  debits: 0,
  afterAnswered: 0,
  afterRefused: 0,
  slow: 0,
  refusedNew: 0,
  stopMs: [] as number[],
  refusedMs: [] as number[],
}
const violations: string[] = []
const started = Date.now()
for (let r = 0; r < ROUNDS; r++) {
  const s = await shutdownRound(env, { key, ack, rand, clients: CLIENTS })
  t.before += s.beforeSignal
  t.reset += s.beforeSignalReset
  t.answered += s.sendsAnswered
  t.debits += s.debits
  t.afterAnswered += s.afterSignalAnswered
  t.afterRefused += s.afterSignalRefused
  t.slow += s.slowAnswered
  t.refusedNew += s.newConnectionRefused ? 1 : 0
  t.stopMs.push(s.stopMs)
  t.refusedMs.push(s.refusedAfterMs)
  violations.push(...s.violations.map((v) => `round ${r + 1}: ${v}`))
}
env.close()
t.stopMs.sort((a, b) => a - b)
t.refusedMs.sort((a, b) => a - b)
report(
  'shutdown',
  {
    seed: SEED,
    'SIGTERM rounds': ROUNDS,
    'clients per round': `${CLIENTS} keep-alive + 3 mid-upload`,
    'requests sent before the signal': t.before + t.reset,
    'of which answered': t.before,
    'of which failed (reset)': t.reset,
    'sends answered 200 / sends processed (debits)': `${t.answered} / ${t.debits}`,
    'answered after the signal (in flight)': t.afterAnswered,
    'refused or reset after the signal (not processed)': t.afterRefused,
    'mid-upload requests answered 200': `${t.slow} of ${ROUNDS * 3}`,
    'rounds where new connections were refused': `${t.refusedNew} of ${ROUNDS}`,
    'signal to refusing new connections (ms, median / max)': `${t.refusedMs[Math.floor(t.refusedMs.length / 2)]} / ${t.refusedMs.at(-1)}`,
    'signal to exit (ms, median / max)': `${t.stopMs[Math.floor(t.stopMs.length / 2)]} / ${t.stopMs.at(-1)}`,
    'acknowledged sends checked in the database': ack.sends.size,
    'elapsed (s)': Math.round((Date.now() - started) / 1000),
  },
  violations,
)
