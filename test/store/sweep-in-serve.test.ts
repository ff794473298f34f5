/**
 * Retention (docs/api.md#retention) in the real server
 * process: `otpd serve` sweeps when it starts (and every minute), deleting
 * verifications `retention.days` after they expired and counters outside their
 * window, and keeping everything younger. test/store/sweep.test.ts covers the exact
 * boundaries with a manual clock.
 */
import { expect, test } from 'bun:test'
import { ManualClock } from '../../src/lib/clock.ts'
import { cliEnv, queryDatabase, startServer, type CliEnv, type RunningServer } from '../kit/cli.ts'
import { DAY, harnessPerTest, TEST } from '../kit/harness.ts'

let env: CliEnv | undefined
let server: RunningServer | undefined
const start = harnessPerTest()

test('serve sweeps at start: verifications 7 days past expiry and old counters go, recent ones stay', async () => {
  env = await cliEnv()
  const old = await start({ dir: env.dir, ownsDir: false, credits: 1, clock: new ManualClock(Date.now() - 10 * DAY), databaseUrl: env.databaseUrl })
  // A real recipient: test recipients record no failures (the recipient cap spares them, docs/api.md#test-recipients).
  const gone = await old.send({ channel: 'sms', recipient: '+14155550123', code: '123456', expires_in: 3600 })
  await old.verify({ verification_id: gone.json.verification_id, code: '000000' })
  old.clock.set(Date.now() - 6 * DAY) // expired 6 days ago: kept (retention is 7 days after expiry)
  const kept = await old.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS, expires_in: 60 })
  old.close()

  const count = async (table: string) => Number((await queryDatabase(env!, `SELECT count(*) AS n FROM ${table}`))[0]!.n)
  expect(await count('verifications')).toBe(2)
  expect(await count('key_hits')).toBe(3)
  expect(await count('recipient_failures')).toBe(1)

  server = await startServer(env)
  // The start-up sweep runs right after the "listening" line; wait for its log line.
  for (let i = 0; i < 200 && !server.output().includes('retention sweep'); i++) await Bun.sleep(10)
  expect(server.output()).toContain('"msg":"retention sweep","verifications":1,"keyHits":3,"recipientFailures":1')
  const ids = await queryDatabase(env, 'SELECT id FROM verifications')
  expect(ids.map((r) => r.id)).toEqual([kept.json.verification_id])
  expect(await count('key_hits')).toBe(0)
  expect(await count('recipient_failures')).toBe(0)
})
