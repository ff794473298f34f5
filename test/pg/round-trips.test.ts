/**
 * The round trips a send and a verify wait for on PostgreSQL
 * (docs/benchmarks.md#postgresql-round-trips): reads that do not depend on
 * one another go out together and are answered in one round trip. Counted
 * here as the longest chain of reads each sent after the answer of the one
 * before: a read's depth is one more than the deepest read of its
 * transaction answered before it was sent. Statements nothing reads (locks,
 * inserts, updates), BEGIN and COMMIT travel pipelined with them and count
 * for none.
 *
 * The figures are exact on purpose: a change that adds a round trip to the
 * hot path changes them, and docs/benchmarks.md with them.
 */
import { describe, expect, test } from 'bun:test'
import { PipelinedTx } from '../../src/store/pg/client.ts'
import { afterTest } from '../kit/cleanup.ts'
import { harnessPerTest, ON_PG, type Harness } from '../kit/harness.ts'
import { approve } from '../kit/fraud.ts'

/** Each write transaction's round trips (its deepest read), in the order the transactions began, and the text of every read. */
function countWaves(): { waves: number[]; reads: string[]; restore: () => void } {
  const original = PipelinedTx.prototype.q
  const state = new WeakMap<PipelinedTx, { index: number; answered: number }>()
  const waves: number[] = []
  const reads: string[] = []
  PipelinedTx.prototype.q = function <T>(this: PipelinedTx, text: string, params?: unknown[]): Promise<T[]> {
    // Reads on the pool (a key's look-up) are no write transaction's.
    if (!(this as unknown as { pipelined: boolean }).pipelined) return original.call(this, text, params) as Promise<T[]>
    let s = state.get(this)
    if (s === undefined) {
      s = { index: waves.push(0) - 1, answered: 0 }
      state.set(this, s)
    }
    const mine = s
    const depth = mine.answered + 1
    waves[mine.index] = Math.max(waves[mine.index]!, depth)
    reads.push(text)
    return original.call(this, text, params).finally(() => void (mine.answered = Math.max(mine.answered, depth))) as Promise<T[]>
  }
  return { waves, reads, restore: () => void (PipelinedTx.prototype.q = original) }
}

/** Rule 3's read of a country's counted sends of the last hour, alone (store/sql/fraud.ts countrySendTimes). */
const COUNTRY_SENDS = /^SELECT at FROM fraud_sends WHERE account_id = \$1 AND country = \$2/
/** The reads of rules 2 to 4 in one statement (store/pg/fraud-store.ts GUARD_READS). */
const GUARD = /^WITH a AS \(SELECT last_approved_at FROM fraud_countries/

describe.skipIf(!ON_PG)('round trips on PostgreSQL', () => {
  const harness = harnessPerTest()

  /** The bench's shape: the fraud guard in monitor mode, an end user's IP, a number of a country with a proven prefix. */
  const signedIn = () =>
    harness({
      credits: 1000,
      config: {
        limits: { key_requests_per_minute: 1_000_000, recipient_per_minute: 1000, recipient_per_hour: 1000, recipient_per_day: 1000 },
        fraud: { mode: 'monitor' },
      },
    })
  /** Waves of each write transaction of `act` (and the reads), once what it started has settled. */
  const observe = async (h: Harness, act: () => Promise<unknown>): Promise<{ waves: number[]; reads: string[] }> => {
    await h.server.storage.settled()
    const counted = countWaves()
    // Restored here, or after the test if it fails before (restoring twice is harmless).
    afterTest(counted.restore)
    await act()
    await h.server.storage.settled()
    counted.restore()
    return counted
  }
  const measure = async (h: Harness, act: () => Promise<unknown>): Promise<number[]> => (await observe(h, act)).waves

  test("a send's first transaction waits for 3 round trips and its COMMIT, its outcome for 2", async () => {
    const h = await signedIn()
    // A proven country: rule 3 reads its last approval and stops there (its hour of sends is
    // read in the guard's statement only for an unproven country: test/store/contract/fraud.test.ts).
    await approve(h, '+14155550100', '198.51.100.7')
    const { waves, reads } = await observe(h, async () => {
      const r = await h.send({ channel: 'sms', recipient: '+14155550123', ip: '198.51.100.7' })
      expect(r.status).toBe(200)
    })
    expect(reads.filter((t) => COUNTRY_SENDS.test(t))).toEqual([])
    expect(reads.filter((t) => GUARD.test(t))).toHaveLength(1)
    // The key's window with the account's profile; the fraud guard's reads of rules 2 to 4 (one statement)
    // with the recipient's failure cap, its send windows and the row number; the debit.
    // Then the outcome (in a transaction of its own here: nothing shares it): its UPDATE ... RETURNING,
    // then the numbering of its verification.sent.
    expect(waves).toEqual([3, 2])
  })

  test('to a country not yet proven, 2 more: a send that counts reads the approval and the hour again under the lock', async () => {
    const h = await signedIn()
    const { waves, reads } = await observe(h, async () => {
      const r = await h.send({ channel: 'sms', recipient: '+14155550123', ip: '198.51.100.7' })
      expect(r.status).toBe(200)
    })
    // The guard's statement reads the hour of sends of the unproven country with its approval, and
    // the first send of the hour counts: rule 3 takes the country's lock and reads both again.
    expect(reads.filter((t) => GUARD.test(t))).toHaveLength(1)
    expect(reads.filter((t) => COUNTRY_SENDS.test(t))).toHaveLength(1)
    expect(waves).toEqual([5, 2])
  })

  test('a wrong code waits for 2 round trips and its COMMIT, and so does a right one', async () => {
    const h = await signedIn()
    const sent = await h.send({ channel: 'sms', recipient: '+14155550123' })
    expect(sent.status).toBe(200)
    const id = sent.json.verification_id as string
    const wrong = await measure(h, async () => expect((await h.verify({ verification_id: id, code: '000000' })).json.verified).toBe(false))
    // The key's window with the verification; the recipient's failure cap (now, and once this
    // failure counts) with the numbering of the attempt's event.
    expect(wrong).toEqual([2])
    const code = h.delivery.lastCode()
    const right = await measure(h, async () => expect((await h.verify({ verification_id: id, code })).json.verified).toBe(true))
    // The same two: the fraud guard's approval (the send's row, the proven country, the minute's
    // counters) is one statement that nothing reads.
    expect(right).toEqual([2])
  })
})
