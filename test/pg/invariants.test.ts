/**
 * The ledger checks (scripts/kit/ledger.ts) on PostgreSQL, which the fault
 * tests and scripts/proofs/crash-pg.ts rely on: silent on a sound database, and each
 * kind of damage named. Runs when OTPD_TEST_DATABASE=postgres.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { SQL } from 'bun'
import {
  cliJson,
  post,
  runFromSource,
  unthrottledNoop,
  type ServerProc,
  emptyAcknowledged,
  inForceUnacknowledged,
  ledgerViolations,
  pgEnv,
  startNodes,
  stopNodes,
} from '../kit/processes.ts'
import { ON_PG, SHIFT_BALANCE_SQL } from '../kit/harness.ts'
import { freshDatabase } from '../kit/pg-cluster.ts'

setDefaultTimeout(60_000)
runFromSource()

const nodes: ServerProc[] = []
afterAll(() => stopNodes(nodes))

describe.skipIf(!ON_PG)('PostgreSQL ledger checks', () => {
  test('sound: no violation; each kind of damage: named', async () => {
    const url = await freshDatabase('invariants')
    const env = pgEnv('pg-invariants', url, unthrottledNoop(['sms']))
    const key = cliJson(env, 'keys', 'create', '--init').key as string
    cliJson(env, 'credits', 'add', '10')
    nodes.push(...(await startNodes(env, 1)))
    const ack = emptyAcknowledged()
    ack.granted = 10
    for (let i = 0; i < 3; i++) {
      const s = await post(nodes[0]!.url, '/api/v1/send', key, { channel: 'sms', recipient: `+1415555010${i}`, code: '1234' })
      ack.sends.set(s.json.verification_id, Date.now())
    }
    const [first] = ack.sends.keys()
    expect((await post(nodes[0]!.url, '/api/v1/verify', key, { verification_id: first, code: '1234' })).json.verified).toBe(true)
    ack.verified.add(first!)
    expect(await ledgerViolations(url, ack, { settledAfterMs: 60_000 })).toEqual([])
    expect(await inForceUnacknowledged(url, ack.sends.keys())).toEqual([])

    // Told but not there.
    const ghost = crypto.randomUUID()
    expect(await ledgerViolations(url, { ...ack, sends: new Map([...ack.sends, [ghost, 0]]) })).toEqual([`acknowledged send ${ghost}: not in the database`])
    expect(await ledgerViolations(url, { ...ack, granted: 11 })).toEqual(['acknowledged grants 11 > grants in the ledger 10'])
    // Charged, in force, never acknowledged: what a 500 must not leave.
    expect((await inForceUnacknowledged(url, [...ack.sends.keys()].slice(1))).map((r) => r.id)).toEqual([first!])

    const sql = new SQL(url)
    try {
      await sql.unsafe(SHIFT_BALANCE_SQL, [1, 1])
      expect(await ledgerViolations(url, ack)).toEqual(['account default: grants 10 - debits 3 + refunds 0 != balance 8'])
      await sql.unsafe(SHIFT_BALANCE_SQL, [1, -1])
      await sql.unsafe('UPDATE verifications SET used_at = NULL WHERE id = $1', [first])
      expect(await ledgerViolations(url, ack)).toEqual([`acknowledged verify ${first}: not used`])
      await sql.unsafe(`UPDATE verifications SET delivery = 'failed' WHERE id = $1`, [first])
      const v = await ledgerViolations(url, ack)
      expect(v.some((x) => x.startsWith(`verification ${first} (charged true, delivery failed`))).toBe(true)
      expect(v.some((x) => x.startsWith(`acknowledged send ${first}: charged true, status active, delivery failed`))).toBe(true)
    } finally {
      await sql.close()
      env.close()
    }
  })
})
