/**
 * Three `otpd serve` processes on one PostgreSQL database (docs/multi-node.md):
 * the rules hold exactly across nodes, in each of 5 rounds, and
 * a key disabled or revoked from the CLI is refused by every node within 1 s.
 *
 * Two groups of three nodes share the database: `wide` (a per-key limit out of
 * the way: 300 verifies of one code must all be admitted, and a verification
 * answers only to the key that sent it) and `std` (the default 120 requests
 * per key and minute, for the limit round). Each round uses its own accounts
 * and keys, so rounds do not share a window or a balance.
 * Runs when OTPD_TEST_DATABASE=postgres (.ci/run's second run).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { cliAsync, post, runFromSource, type OtpdEnv, type ServerProc, pgEnv, startNodes, stopNodes } from '../kit/processes.ts'
import { freshDatabase } from '../kit/pg-cluster.ts'

setDefaultTimeout(120_000)
runFromSource()

const ON_PG = process.env.OTPD_TEST_DATABASE === 'postgres'
// The fraud guard off: these loads to new numbers are what it refuses (its own rules across nodes: test/api/exact-across-nodes.test.ts).
const NOOP = '[fraud]\nmode = "off"\n[channels]\nsms = ["x"]\n[providers.x]\ntype = "noop"\n'

let wideEnv: OtpdEnv
let stdEnv: OtpdEnv
let wide: ServerProc[] = []
let std: ServerProc[] = []

async function otpd(env: OtpdEnv, ...args: string[]): Promise<any> {
  const r = await cliAsync(env, ...args, '--json')
  if (r.code !== 0) throw new Error(`otpd ${args.join(' ')} failed (${r.code}): ${r.stderr}`)
  return JSON.parse(r.stdout)
}

const phone = (round: number, i: number) => `+1415${String(round).padStart(2, '0')}${String(i).padStart(5, '0')}`
const count = (xs: { status: number }[], status: number) => xs.filter((x) => x.status === status).length
/** How many answers had each status, and each other answer's error: a failed count shows what came instead. */
const tally = (xs: { status: number; json: Record<string, unknown> }[]) => {
  const out: Record<string, number> = {}
  for (const x of xs) {
    const k = x.status === 200 || x.status === 402 || x.status === 429 ? String(x.status) : `${x.status} ${String(x.json.error)}`
    out[k] = (out[k] ?? 0) + 1
  }
  return out
}

describe.skipIf(!ON_PG)('three nodes on one PostgreSQL', () => {
  beforeAll(async () => {
    const url = await freshDatabase('multinode')
    // Hundreds of requests on one key or account wait in turn for its lock: past busy_timeout_ms (5 s) one answers
    // 500 with nothing in force (docs/configuration.md), which a machine busy with the rest of the suite can reach.
    // These rounds check that the rules hold exactly, so the wait is given room.
    const database = 'busy_timeout_ms = 60000'
    wideEnv = pgEnv('multinode-wide', url, `[limits]\nkey_requests_per_minute = 100000\n${NOOP}`, { database })
    // Same database, same secret: only the per-key limit differs.
    stdEnv = pgEnv('multinode-std', url, NOOP, { database, secret: (wideEnv as ReturnType<typeof pgEnv>).secret })
    wide = await startNodes(wideEnv, 3)
    std = await startNodes(stdEnv, 3)
  })

  afterAll(async () => {
    await stopNodes([...wide, ...std])
    wideEnv?.close()
    stdEnv?.close()
  })

  for (let round = 1; round <= 5; round++) {
    test(`round ${round}: single use, per-key limit, credits, per-recipient window`, async () => {
      const [a, c] = [`v${round}`, `c${round}`]
      await Promise.all([otpd(wideEnv, 'accounts', 'create', a), otpd(wideEnv, 'accounts', 'create', c)])
      const [kv, kl, kc, kr] = await Promise.all([
        otpd(wideEnv, 'keys', 'create', '--account', a),
        otpd(wideEnv, 'keys', 'create', '--account', a),
        otpd(wideEnv, 'keys', 'create', '--account', c),
        otpd(wideEnv, 'keys', 'create', '--account', a),
        otpd(wideEnv, 'credits', 'add', '40', '--account', a),
        otpd(wideEnv, 'credits', 'add', '50', '--account', c),
      ]).then((ks) => ks.slice(0, 4).map((k) => k.key as string))

      // 300 concurrent verifies of one correct code, spread over the nodes: exactly one verifies.
      const sent = await post(wide[0]!.url, '/api/v1/send', kv!, { channel: 'sms', recipient: phone(round, 0), code: '4242' + String(round).padStart(2, '0') })
      expect(sent.status).toBe(200)
      const verifies = await Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          post(wide[i % 3]!.url, '/api/v1/verify', kv!, { verification_id: sent.json.verification_id, code: '4242' + String(round).padStart(2, '0') }),
        ),
      )
      expect(count(verifies, 200)).toBe(300)
      expect(verifies.filter((v) => v.json.verified === true)).toHaveLength(1)
      expect(verifies.filter((v) => v.json.message === 'Code already used')).toHaveLength(299)

      // 300 requests on one key (default limit 120 a minute): exactly 120 admitted.
      const limited = await Promise.all(
        Array.from({ length: 300 }, (_, i) => post(std[i % 3]!.url, '/api/v1/send', kl!, { channel: 'sms', recipient: '+15550100001' })),
      )
      expect(tally(limited)).toEqual({ '200': 120, '429': 180 })

      // 200 sends against 50 credits: exactly 50 go out, 150 get 402, the balance ends at 0.
      const spends = await Promise.all(
        Array.from({ length: 200 }, (_, i) => post(wide[i % 3]!.url, '/api/v1/send', kc!, { channel: 'sms', recipient: phone(round, 1000 + i) })),
      )
      expect(tally(spends)).toEqual({ '200': 50, '402': 150 })
      expect((await otpd(wideEnv, 'credits', 'balance', '--account', c)).balance).toBe(0)

      // 30 sends to one recipient: exactly the per-minute window's 2 accepted.
      const one = await Promise.all(
        Array.from({ length: 30 }, (_, i) => post(wide[i % 3]!.url, '/api/v1/send', kr!, { channel: 'sms', recipient: phone(round, 9999) })),
      )
      expect(tally(one)).toEqual({ '200': 2, '429': 28 })
      // 40 granted: 1 for the verify round, 2 here.
      expect((await otpd(wideEnv, 'credits', 'balance', '--account', a)).balance).toBe(37)
    })
  }

  for (const [verb, status, message] of [
    ['disable', 403, 'API key is disabled'],
    ['revoke', 401, null],
  ] as const) {
    test(`a key ${verb}d from the CLI is refused by every node within 1 s`, async () => {
      const k = await otpd(wideEnv, 'keys', 'create')
      const ask = (n: ServerProc) => post(n.url, '/api/v1/verify', k.key, { verification_id: crypto.randomUUID(), code: '1234' })
      // Every node has seen the key (a node that caches keys holds it now).
      for (const n of [...wide, ...std]) expect((await ask(n)).status).not.toBe(401)
      const r = await cliAsync(wideEnv, 'keys', verb, String(k.id))
      expect(r.code).toBe(0)
      const done = performance.now()
      // Every node is asked again and again until 1.5 s after the change: each request
      // that LEFT 1 s or more after it must be refused (its answer may come later on a busy machine).
      const asked = await Promise.all(
        [...wide, ...std].map(async (n) => {
          const seen: { sentMs: number; refused: boolean }[] = []
          while (performance.now() - done < 1500) {
            const sentMs = performance.now() - done
            const a = await ask(n)
            seen.push({ sentMs, refused: a.status === status && (message === null || a.json.error === message) })
            await Bun.sleep(20)
          }
          return seen
        }),
      )
      for (const seen of asked) {
        const late = seen.filter((x) => x.sentMs >= 1000)
        expect(late.length).toBeGreaterThan(0)
        expect(late.filter((x) => !x.refused)).toEqual([])
      }
    })
  }
})
