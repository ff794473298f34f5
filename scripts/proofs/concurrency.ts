/**
 * Concurrency (docs/reliability.md) against two compiled server processes on one
 * database file (inside one process the event loop already serialises much;
 * two processes prove the IMMEDIATE transactions). Each scenario runs
 * --rounds times on a fresh database; requests are spread over both servers.
 *
 *   200 concurrent verifies of one correct code        -> exactly 1 verified
 *   100 concurrent sends to one recipient               -> exactly 2 accepted (per-minute limit)
 *   200 concurrent sends against a balance of N = 50    -> exactly 50 accepted, balance 0
 *   300 concurrent requests on one key, limit 120/min   -> exactly 120 admitted
 *
 * Usage: bun scripts/proofs/concurrency.ts [--rounds=5]
 */
import { cliJson, makeEnv, numberArg, post, report, startServer, type Answer, type OtpdEnv, type ServerProc } from '../kit/otpd.ts'

const ROUNDS = numberArg('rounds', 5)
const NOOP = '[channels]\nsms = ["x"]\nemail = ["x"]\nvoice = ["x"]\n[providers.x]\ntype = "noop"\n'
// The fraud guard off: 200 sends to new numbers of one country is what its rule 3 refuses.
const HIGH_KEY_LIMIT = '[limits]\nkey_requests_per_minute = 1000000000\n[fraud]\nmode = "off"\n'

async function withServers<T>(toml: string, fn: (env: OtpdEnv, key: string, urls: [string, string]) => Promise<T>, credits = 0): Promise<T> {
  const env = makeEnv('concurrency', toml)
  const key = cliJson(env, 'keys', 'create', '--init').key as string
  if (credits > 0) cliJson(env, 'credits', 'add', String(credits))
  const servers: ServerProc[] = [await startServer(env), await startServer(env)]
  try {
    return await fn(env, key, [servers[0]!.url, servers[1]!.url])
  } finally {
    for (const s of servers) s.proc.kill('SIGTERM')
    await Promise.all(servers.map((s) => s.proc.exited))
    env.close()
  }
}

const tally = (rs: Answer[]) => {
  const t: Record<string, number> = {}
  for (const r of rs) {
    const k = `${r.status} ${r.json.message ?? r.json.error ?? ''}`.trim()
    t[k] = (t[k] ?? 0) + 1
  }
  return t
}
const count = (rs: Answer[], f: (r: Answer) => boolean) => rs.filter(f).length

const violations: string[] = []
const figures: Record<string, string | number> = { rounds: ROUNDS }
const expectEq = (what: string, got: number, want: number, detail: unknown) => {
  if (got !== want) violations.push(`${what}: ${got}, expected ${want} (${JSON.stringify(detail)})`)
}

// 1. 200 verifies of one correct (charged) code.
{
  let verified = 0
  for (let r = 0; r < ROUNDS; r++) {
    await withServers(
      HIGH_KEY_LIMIT + NOOP,
      async (_env, key, urls) => {
        const sent = await post(urls[0], '/api/v1/send', key, { channel: 'sms', recipient: '+14155550123', code: '31415926' })
        const rs = await Promise.all(
          Array.from({ length: 200 }, (_, i) => post(urls[i % 2]!, '/api/v1/verify', key, { verification_id: sent.json.verification_id, code: '31415926' })),
        )
        const ok = count(rs, (a) => a.json.verified === true)
        verified += ok
        expectEq('verifies that succeeded', ok, 1, tally(rs))
        expectEq(
          'Code already used answers',
          count(rs, (a) => a.status === 200 && a.json.message === 'Code already used'),
          199,
          tally(rs),
        )
      },
      1,
    )
  }
  figures['200 concurrent verifies of one code: verified'] = `${verified} in ${ROUNDS} rounds (1 per round)`
}

// 2. 100 sends to one recipient in the same minute.
{
  const accepted: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    await withServers(
      HIGH_KEY_LIMIT + NOOP,
      async (env, key, urls) => {
        const rs = await Promise.all(
          Array.from({ length: 100 }, (_, i) => post(urls[i % 2]!, '/api/v1/send', key, { channel: 'sms', recipient: '+14155550199' })),
        )
        const ok = count(rs, (a) => a.status === 200)
        accepted.push(ok)
        expectEq('sends to one recipient accepted', ok, 2, tally(rs))
        expectEq(
          'sends to one recipient limited (429)',
          count(rs, (a) => a.status === 429),
          98,
          tally(rs),
        )
        expectEq('balance after', cliJson(env, 'credits', 'balance').balance, 98, {})
      },
      100,
    )
  }
  figures['100 concurrent sends to one recipient: accepted'] = accepted.join(', ')
}

// 3. 200 sends against a balance of 50.
{
  const accepted: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    await withServers(
      HIGH_KEY_LIMIT + NOOP,
      async (env, key, urls) => {
        const rs = await Promise.all(
          Array.from({ length: 200 }, (_, i) =>
            post(urls[i % 2]!, '/api/v1/send', key, { channel: 'sms', recipient: `+1415555${String(i).padStart(4, '0')}` }),
          ),
        )
        const ok = count(rs, (a) => a.status === 200)
        accepted.push(ok)
        expectEq('sends against 50 credits accepted', ok, 50, tally(rs))
        expectEq(
          '402 answers',
          count(rs, (a) => a.status === 402),
          150,
          tally(rs),
        )
        expectEq('balance after', cliJson(env, 'credits', 'balance').balance, 0, {})
      },
      50,
    )
  }
  figures['200 concurrent sends, balance 50: accepted'] = accepted.join(', ')
}

// 4. 300 requests on one key with the default limit of 120 per minute.
{
  const admitted: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    await withServers(NOOP, async (_env, key, urls) => {
      const rs = await Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          i % 3 === 0
            ? post(urls[i % 2]!, '/api/v1/send', key, { channel: 'sms', recipient: '+15550100001' })
            : post(urls[i % 2]!, '/api/v1/verify', key, { verification_id: 'nope', code: '123456' }),
        ),
      )
      const limited = count(rs, (a) => a.status === 429 && /Maximum 120 requests per minute/.test(String(a.json.error)))
      admitted.push(300 - limited)
      expectEq('requests admitted under the per-key limit', 300 - limited, 120, tally(rs))
      expectEq(
        '5xx answers',
        count(rs, (a) => a.status >= 500),
        0,
        tally(rs),
      )
    })
  }
  figures['300 concurrent requests, per-key limit 120: admitted'] = admitted.join(', ')
}

report('concurrency (two server processes, one database)', figures, violations)
