/**
 * Crash safety (docs/reliability.md). Runs the compiled server under mixed
 * send/verify load from several concurrent clients, kills it with SIGKILL at
 * random moments (some during start-up), and after every kill checks the
 * database file: integrity, the ledger, and every outcome a client was told
 * (scripts/kit/ledger.ts). Then restarts and goes on. Operator credit
 * grants from the CLI run now and then during the load.
 *
 * Usage: bun scripts/proofs/crash.ts [--kills=200] [--clients=8] [--seed=N]
 * Exits 1 on any violation. Default config: synchronous FULL (the default), a
 * `noop` provider, limits raised so the load is not throttled; lockouts last
 * an hour so every acknowledged lockout must still hold during the run.
 */
import { checkLedger, emptyAcknowledged } from '../kit/ledger.ts'
import { cliAsync, cliJson, makeEnv, numberArg, post, prng, report, seedFromArgs, sleep, spawnServer, unthrottledNoop } from '../kit/otpd.ts'

const KILLS = numberArg('kills', 200)
const CLIENTS = numberArg('clients', 8)
const SEED = seedFromArgs()
const rand = prng(SEED)
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!
const digits = (n: number) => Array.from({ length: n }, () => Math.floor(rand() * 10)).join('')

const env = makeEnv('crash', unthrottledNoop(['sms', 'email', 'voice'], `recipient_failures_per_day = 1000000000\nlockout_seconds = 3600\n`))

const key = cliJson(env, 'keys', 'create', '--init', '--name', 'crash').key as string
cliJson(env, 'credits', 'add', '1000000')
const ack = emptyAcknowledged()
ack.granted = 1_000_000

/** Acknowledged sends still worth verifying, with their codes. */
const open: { id: string; code: string }[] = []
const PHONES = Array.from({ length: 100 }, (_, i) => `+1415555${String(i).padStart(4, '0')}`)
const EMAILS = Array.from({ length: 50 }, (_, i) => `user${i}@example.com`)

const counts = { requests: 0, answered: 0, networkErrors: 0, sends: 0, verified: 0, invalid: 0, locked: 0, alreadyUsed: 0, status5xx: 0 }
const violations: string[] = []
let url: string | null = null
let running = true

async function oneRequest(base: string): Promise<void> {
  const r = rand()
  if (r < 0.4 || open.length === 0) {
    const channel = pick(['sms', 'sms', 'voice', 'email'] as const)
    const recipient = channel === 'email' ? pick(EMAILS) : pick(PHONES)
    const code = digits(8)
    const a = await post(base, '/api/v1/send', key, { channel, recipient, code, expires_in: 3600 })
    counts.answered++
    if (a.status === 200) {
      ack.sends.set(a.json.verification_id, Date.now())
      open.push({ id: a.json.verification_id, code })
      if (open.length > 300) open.shift() // keep the working set small: client work stays constant
      counts.sends++
    } else unexpected('send', a.status, a.json)
    return
  }
  const right = r < 0.7
  // Wrong guesses favour verifications that already have failures, so lockouts happen.
  const guessed = right ? [] : open.filter((o) => ack.invalid.has(o.id))
  const v = guessed.length > 0 && rand() < 0.6 ? pick(guessed) : pick(open)
  let code = v.code
  while (!right && code === v.code) code = digits(8)
  const a = await post(base, '/api/v1/verify', key, { verification_id: v.id, code })
  counts.answered++
  const done = () => {
    const j = open.indexOf(v)
    if (j >= 0) open.splice(j, 1)
  }
  if (a.status === 200 && a.json.message === 'Code verified successfully') {
    if (!right) violations.push(`a wrong code verified ${v.id}`)
    ack.verified.add(v.id)
    counts.verified++
    done()
  } else if (a.status === 200 && a.json.message === 'Invalid code') {
    if (right) violations.push(`the acknowledged code of ${v.id} answered Invalid code`)
    ack.invalid.set(v.id, (ack.invalid.get(v.id) ?? 0) + 1)
    counts.invalid++
  } else if (a.status === 429 && typeof a.json.message === 'string' && a.json.message.startsWith('Too many failed attempts')) {
    ack.locked.set(v.id, Date.now())
    counts.locked++
    done()
  } else if (a.status === 200 && a.json.message === 'Code already used') {
    // A verify whose answer was lost in a kill committed; fine unless nobody verified it.
    counts.alreadyUsed++
    done()
  } else unexpected('verify', a.status, a.json)
}

function unexpected(what: string, status: number, json: unknown) {
  if (status >= 500) counts.status5xx++
  violations.push(`${what} answered ${status} ${JSON.stringify(json)}`)
}

async function client(): Promise<void> {
  while (running) {
    const base = url
    if (!base) {
      await sleep(2)
      continue
    }
    counts.requests++
    try {
      await oneRequest(base)
    } catch {
      counts.networkErrors++ // the server died under this request: its outcome is unknown, not acknowledged
      await sleep(1)
    }
  }
}

const started = Date.now()
const clients = Array.from({ length: CLIENTS }, client)
let killsUnderLoad = 0
let killsAtStart = 0
let checks = 0
let startupMs = 0
let starts = 0
let cliGrants = 0
const pendingCli: Promise<void>[] = []

for (let k = 0; k < KILLS; k++) {
  const t0 = performance.now()
  const { proc, listening } = spawnServer(env)
  if (rand() < 0.1) {
    // Kill during start-up: migrations check, secret, first sweep.
    await sleep(rand() * 60)
    killsAtStart++
  } else {
    const s = await listening.catch((e: Error) => {
      violations.push(`start ${k}: ${e.message.slice(0, 500)}`)
      return null
    })
    if (!s) break
    startupMs += performance.now() - t0
    starts++
    url = s.url
    if (k % 10 === 5) {
      // An operator grants credits while the load runs.
      pendingCli.push(
        cliAsync(env, 'credits', 'add', '7', '--note', `crash ${k}`).then((r) => {
          if (r.code === 0) {
            ack.granted += 7
            cliGrants++
          } else violations.push(`credits add exited ${r.code}: ${r.stderr.trim()}`)
        }),
      )
    }
    await sleep(30 + rand() * 470)
    killsUnderLoad++
  }
  proc.kill('SIGKILL')
  await proc.exited
  url = null
  // Answers already received are acknowledged; the server is dead, so no more can arrive for this run.
  const r = await checkLedger(env.dbPath, ack)
  checks += r.checks
  for (const v of r.violations) violations.push(`after kill ${k + 1}: ${v}`)
  if (violations.length > 20) break
  if ((k + 1) % 25 === 0)
    console.log(`${k + 1} kills, ${counts.answered} answers, ${violations.length} violations, ${Math.round((Date.now() - started) / 1000)} s`)
}
running = false
await Promise.all([...clients, ...pendingCli])
// The CLI grants that finished after the last kill are checked once more.
const last = await checkLedger(env.dbPath, ack)
checks += last.checks
violations.push(...last.violations.map((v) => `final: ${v}`))
env.close()

report(
  'crash safety',
  {
    seed: SEED,
    'kill -9': `${killsUnderLoad + killsAtStart} (${killsUnderLoad} under load, ${killsAtStart} during start-up)`,
    clients: CLIENTS,
    'requests sent': counts.requests,
    'answers received': counts.answered,
    'requests cut by a kill': counts.networkErrors,
    'acknowledged sends': counts.sends,
    'acknowledged verified': counts.verified,
    'acknowledged Invalid code': counts.invalid,
    'acknowledged lockouts': counts.locked,
    'Code already used (answer lost in a kill)': counts.alreadyUsed,
    'CLI credit grants during load': cliGrants,
    '5xx answers': counts.status5xx,
    'invariant checks': checks,
    'mean start to listening (ms)': starts ? Math.round(startupMs / starts) : '-',
    'elapsed (s)': Math.round((Date.now() - started) / 1000),
  },
  violations,
)
