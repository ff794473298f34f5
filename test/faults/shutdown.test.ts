/**
 * SIGTERM under load (docs/reliability.md), the fast version of scripts/proofs/shutdown.ts,
 * on `bun src/main.ts serve`: requests written before the signal are all
 * answered, uploads in flight finish, new connections are then refused, the
 * process exits 0 and the database is closed cleanly (no -wal, integrity ok,
 * debits = answered sends).
 */
import { afterAll, expect, test } from 'bun:test'
import { emptyAcknowledged, cliJson, makeEnv, prng, runFromSource, unthrottledNoop, shutdownRound } from '../kit/processes.ts'

runFromSource()
const env = makeEnv('shutdown-test', unthrottledNoop(['sms', 'voice']))
afterAll(() => env.close())

test('SIGTERM under load, three rounds: nothing written before the signal fails, exit 0, database closed', async () => {
  const key = cliJson(env, 'keys', 'create', '--init').key as string
  cliJson(env, 'credits', 'add', '1000000')
  const ack = emptyAcknowledged()
  ack.granted = 1_000_000
  const rand = prng(11)
  for (let round = 0; round < 3; round++) {
    const s = await shutdownRound(env, { key, ack, rand, clients: 12, loadMs: 400 })
    expect(s.violations).toEqual([])
    expect(s.beforeSignal).toBeGreaterThan(0)
    expect(s.beforeSignalReset).toBe(0)
    expect(s.slowAnswered).toBe(3)
    expect(s.newConnectionRefused).toBe(true)
    expect(s.exitCode).toBe(0)
    expect(s.debits).toBe(s.sendsAnswered)
  }
}, 60_000)

test('SIGTERM right after start, and a quiet stop, exit 0 with nothing on stderr', async () => {
  const { cliEnv, startServer } = await import('../kit/cli.ts')
  // Every channel has a real provider: otherwise serve warns (on stderr) that codes only reach the log.
  const e = await cliEnv(
    '[providers.hook]\ntype = "webhook"\nurl = "http://127.0.0.1:9/otp"\nsecret_env = "OTPD_TEST_WEBHOOK_SECRET"\n[channels]\nsms = ["hook"]\nemail = ["hook"]\nvoice = ["hook"]\nwhatsapp = ["hook"]\n',
    { OTPD_TEST_WEBHOOK_SECRET: 'a-secret-for-the-test-only-0123456789' },
  )
  try {
    for (let i = 0; i < 3; i++) {
      const s = await startServer(e)
      expect(await s.stop()).toBe(0)
      expect(await new Response(s.proc.stderr).text()).toBe('')
      expect(s.output()).toContain('"msg":"stopping"')
    }
  } finally {
    e.close()
  }
}, 30_000)
