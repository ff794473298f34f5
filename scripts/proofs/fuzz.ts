/**
 * Fuzz (docs/reliability.md): generated hostile requests against the compiled
 * server over real sockets (fetch, and raw TCP for bytes that are barely HTTP).
 * Zero 5xx from otpd, zero crashes, zero error-level log lines, and every 4xx
 * carries a documented message and a request id (scripts/kit/fuzz-runner.ts).
 *
 * Usage: bun scripts/proofs/fuzz.ts [--count=100000] [--seed=N] [--concurrency=16]
 * synchronous = NORMAL here only to spend the run on parsing, not on fsync.
 */
import { runFuzz } from '../kit/fuzz-runner.ts'
import { cli, cliJson, makeEnv, numberArg, post, report, seedFromArgs, startServer, unthrottledNoop } from '../kit/otpd.ts'

const COUNT = numberArg('count', 100_000)
const SEED = seedFromArgs(20261122)
const CONCURRENCY = numberArg('concurrency', 16)

const env = makeEnv('fuzz', unthrottledNoop(['sms', 'email', 'voice']), { database: 'synchronous = "NORMAL"' })

const keys = {
  active: cliJson(env, 'keys', 'create', '--init', '--name', 'fuzz').key as string,
  disabled: cliJson(env, 'keys', 'create', '--init', '--name', 'disabled').key as string,
  revoked: cliJson(env, 'keys', 'create', '--init', '--name', 'revoked').key as string,
}
for (const [verb, k] of [
  ['disable', keys.disabled],
  ['revoke', keys.revoked],
] as const) {
  if (cli(env, 'keys', verb, k.slice(5, 13)).code !== 0) throw new Error(`keys ${verb} failed`)
}
cliJson(env, 'credits', 'add', '100000000')

const server = await startServer(env)
const started = Date.now()
const result = await runFuzz({
  host: '127.0.0.1',
  port: server.port,
  keys,
  count: COUNT,
  seed: SEED,
  concurrency: CONCURRENCY,
  onProgress: (n) => console.log(`${n} cases, ${Math.round((Date.now() - started) / 1000)} s`),
})
const elapsed = (Date.now() - started) / 1000

const violations = [...result.violations]
const alive = server.proc.exitCode === null && server.proc.signalCode === null
if (!alive) violations.push(`the server exited (${server.proc.exitCode ?? server.proc.signalCode})`)
else {
  const sanity = await post(server.url, '/api/v1/send', keys.active, { channel: 'sms', recipient: '+15550100001' })
  if (sanity.status !== 200) violations.push(`after the run a plain send answered ${sanity.status}`)
}
const errorLines = server
  .output()
  .split('\n')
  .filter((l) => l.includes('"level":"error"'))
for (const l of errorLines.slice(0, 5)) violations.push(`error logged: ${l.slice(0, 300)}`)
server.proc.kill('SIGTERM')
await server.proc.exited
env.close()

const fmt = (m: Record<string, number>) =>
  Object.entries(m)
    .sort()
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ') || '-'
report(
  'fuzz',
  {
    seed: SEED,
    cases: `${result.cases} (${result.fetchCases} fetch, ${result.rawCases} raw TCP)`,
    'answers from otpd by status': fmt(result.byStatus),
    '5xx from otpd': Object.entries(result.byStatus)
      .filter(([s]) => Number(s) >= 500)
      .reduce((n, [, v]) => n + v, 0),
    'bare answers of the HTTP parser (not HTTP/1.1)': fmt(result.parserAnswers),
    'raw connections closed without an answer': result.closedWithoutAnswer,
    'raw connections left waiting for more body': result.rawTimedOut,
    'cases fetch would not send': result.unsendable,
    'error lines in the server log': errorLines.length,
    'server alive after the run': alive ? 'yes' : 'no',
    'elapsed (s)': Math.round(elapsed),
    'cases per second': Math.round(result.cases / elapsed),
  },
  violations,
)
