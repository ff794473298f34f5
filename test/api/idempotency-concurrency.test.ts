/**
 * Idempotency keys under concurrency, across a restart and across processes
 * (docs/api.md#idempotency-keys): the record is a row taken
 * in the operation's write transaction, so one key runs its operation once
 * whatever arrives at the same time and wherever.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { cliEnv, queryDatabase, startServer, type CliEnv } from '../kit/cli.ts'
import { harnessPerTest, type Harness } from '../kit/harness.ts'
import { LOG_FLUSH_MS } from '../../src/lib/logger.ts'

// The cross-process tests start `otpd` processes.
setDefaultTimeout(60_000)

let h: Harness | undefined
const start = harnessPerTest()

const PHONE = '+14155550123'
const IN_PROGRESS = 'A request with this Idempotency-Key is still in progress'

interface Answer {
  status: number
  text: string
  json: Record<string, any>
  replayed: string | null
  requestIdHeader: string | null
}

async function post(base: string, path: string, apiKey: string, body: unknown, key: string): Promise<Answer> {
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return {
    status: res.status,
    text,
    json: JSON.parse(text),
    replayed: res.headers.get('idempotent-replayed'),
    requestIdHeader: res.headers.get('x-request-id'),
  }
}

/** Exactly one answer ran the operation; every other one is its stored answer verbatim, or (where allowed) the in-progress 409. */
function expectOneRan(answers: Answer[], status: number, allowInProgress: boolean): Answer {
  const ran = answers.filter((a) => a.replayed === null && a.status === status)
  expect(ran).toHaveLength(1)
  const first = ran[0]!
  for (const a of answers) {
    if (a === first) continue
    if (a.status === 409 && a.json.error === IN_PROGRESS) {
      expect(allowInProgress).toBe(true)
      expect(a.replayed).toBeNull()
      continue
    }
    expect(a.text).toBe(first.text)
    expect(a.replayed).toBe('true')
    expect(a.requestIdHeader).toBe(first.json.request_id)
  }
  return first
}

/** Rows of the test's database, whichever the engine; counts as numbers (PostgreSQL's bigint arrives as text). */
async function query(where: Harness | CliEnv, sql: string): Promise<Record<string, any>[]> {
  const rows = 'sql' in where ? await where.sql(sql) : await queryDatabase(where, sql)
  return rows.map((r) =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' || (k === 'n' && typeof v === 'string') ? Number(v) : v])),
  )
}

describe('one process', () => {
  test('50 concurrent sends with one key and one body: one delivery, one debit; the other 49 the stored answer or 409', async () => {
    h = await start({ credits: 10, config: { limits: { key_requests_per_minute: 10_000 } } })
    const base = h.listen()
    const body = { channel: 'sms', recipient: PHONE }
    const answers = await Promise.all(Array.from({ length: 50 }, () => post(base, '/api/v1/send', h!.key, body, 'double-click')))
    const first = expectOneRan(answers, 200, true)
    expect(h.delivery.sent).toHaveLength(1)
    expect(h.delivery.sent[0]!.verificationId).toBe(first.json.verification_id)
    expect((await h.server.admin.balance()).balance).toBe(9)
    expect((await query(h, 'SELECT kind FROM credit_ledger ORDER BY id')).map((r) => r.kind)).toEqual(['grant', 'debit'])
    expect((await query(h, 'SELECT count(*) AS n FROM verifications'))[0]!.n).toBe(1)
    // Once it has answered, every later one is the stored answer.
    const later = await Promise.all(Array.from({ length: 50 }, () => post(base, '/api/v1/send', h!.key, body, 'double-click')))
    for (const a of later) {
      expect(a.text).toBe(first.text)
      expect(a.replayed).toBe('true')
    }
    expect(h.delivery.sent).toHaveLength(1)
  })

  test('50 concurrent verifies of a wrong code with one key: one attempt', async () => {
    h = await start({ credits: 1, config: { limits: { key_requests_per_minute: 10_000 } } })
    const base = h.listen()
    const sent = await post(base, '/api/v1/send', h.key, { channel: 'sms', recipient: PHONE }, 's')
    const body = { verification_id: sent.json.verification_id, code: '000000' }
    const answers = await Promise.all(Array.from({ length: 50 }, () => post(base, '/api/v1/verify', h!.key, body, 'retry')))
    const first = expectOneRan(answers, 200, false)
    expect(first.json.message).toBe('Invalid code')
    expect((await query(h, 'SELECT failed_attempts FROM verifications'))[0]!.failed_attempts).toBe(1)
  })

  test('a replay after a restart answers the stored response', async () => {
    h = await start({ credits: 2 })
    const body = { channel: 'sms', recipient: PHONE }
    const first = await post(h.listen(), '/api/v1/send', h.key, body, 'k')
    expect(first.status).toBe(200)
    await h.server.http.server?.stop(true)
    await h.server.shutdown()
    h = await h.restart()
    const replay = await post(h.listen(), '/api/v1/send', h.key, body, 'k')
    expect(replay.text).toBe(first.text)
    expect(replay.replayed).toBe('true')
    expect(replay.requestIdHeader).toBe(first.json.request_id)
    expect(h.delivery.sent).toHaveLength(1)
    expect((await h.server.admin.balance()).balance).toBe(1)
  })
})

describe('two otpd serve processes on one database', () => {
  let env: CliEnv

  test('sends, verifies and cancels with one key, spread over both: each runs once; a new process replays the stored answers', async () => {
    env = await cliEnv('[limits]\nkey_requests_per_minute = 100000\n')
    const key = env.json('keys', 'create').key as string
    env.json('credits', 'add', '100')
    const a = await startServer(env)
    const b = await startServer(env)
    const both = [a.url, b.url]

    const body = { channel: 'sms', recipient: PHONE }
    const sends = await Promise.all(Array.from({ length: 40 }, (_, i) => post(both[i % 2]!, '/api/v1/send', key, body, 'cross')))
    const sent = expectOneRan(sends, 200, true)
    const id = sent.json.verification_id as string
    // The log provider prints each delivery once, in the process that made it
    // (a log line, written within LOG_FLUSH_MS of the send: wait that long for a second one too).
    const deliveryLines = () => (a.output() + b.output()).split('\n').filter((l) => l.includes('[otpd log provider]'))
    for (let waited = 0; deliveryLines().length === 0 && waited < 2_000; waited += 10) await Bun.sleep(10)
    await Bun.sleep(LOG_FLUSH_MS * 5)
    const deliveries = deliveryLines()
    expect(deliveries).toHaveLength(1)
    expect(JSON.parse(deliveries[0]!)).toMatchObject({ level: 'info', verification_id: id })
    expect(env.json('credits', 'balance').balance).toBe(99)
    expect((await query(env, "SELECT count(*) AS n FROM credit_ledger WHERE kind = 'debit'"))[0]!.n).toBe(1)
    for (const url of both) {
      const replay = await post(url, '/api/v1/send', key, body, 'cross')
      expect(replay.text).toBe(sent.text)
      expect(replay.replayed).toBe('true')
    }

    const wrong = { verification_id: id, code: '0000' }
    const verifies = await Promise.all(Array.from({ length: 40 }, (_, i) => post(both[i % 2]!, '/api/v1/verify', key, wrong, 'v')))
    expectOneRan(verifies, 200, false)
    expect((await query(env, 'SELECT failed_attempts FROM verifications'))[0]!.failed_attempts).toBe(1)

    const cancels = await Promise.all(Array.from({ length: 40 }, (_, i) => post(both[i % 2]!, `/api/v1/verifications/${id}/cancel`, key, undefined, 'c')))
    const canceled = expectOneRan(cancels, 200, false)
    expect(canceled.json).toMatchObject({ success: true, verification_id: id, status: 'canceled' })

    // A process started afterwards (a restart) answers the stored responses.
    await a.stop()
    const c = await startServer(env)
    const replay = await post(c.url, '/api/v1/send', key, body, 'cross')
    expect(replay.text).toBe(sent.text)
    expect(replay.requestIdHeader).toBe(sent.json.request_id)
    expect((await post(c.url, `/api/v1/verifications/${id}/cancel`, key, undefined, 'c')).text).toBe(canceled.text)
    expect(env.json('credits', 'balance').balance).toBe(99)
  })

  test('kill -9 during an idempotent send: the next process answers 409 until recovery settles the send as unknown, then the 200 it would have answered', async () => {
    const received: { verification_id: string; message: string }[] = []
    let hang = true
    const gw = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: async (req) => {
        received.push((await req.json()) as { verification_id: string; message: string })
        if (hang) await Bun.sleep(20_000)
        return new Response(null, { status: 204 })
      },
    })
    try {
      const timeoutMs = 1000
      env = await cliEnv(
        `[delivery]\ntimeout_ms = ${timeoutMs}\n[channels]\nsms = ["gw"]\n[providers.gw]\ntype = "webhook"\nurl = "http://127.0.0.1:${gw.port}/otp"\nsecret_env = "GW_SECRET"\n`,
        { GW_SECRET: 'gateway-secret-0123456789abcdef' },
      )
      const key = env.json('keys', 'create').key as string
      env.json('credits', 'add', '5')
      const a = await startServer(env)
      const body = { channel: 'sms', recipient: PHONE }
      const pending = post(a.url, '/api/v1/send', key, body, 'crash').catch(() => null)
      for (let i = 0; i < 200 && received.length === 0; i++) await Bun.sleep(10)
      expect(received).toHaveLength(1)
      a.proc.kill('SIGKILL')
      await a.proc.exited
      expect(await pending).toBeNull()
      hang = false

      const b = await startServer(env)
      const during = await post(b.url, '/api/v1/send', key, body, 'crash')
      expect(during.status).toBe(409)
      expect(during.json.error).toBe(IN_PROGRESS)
      // Recovery (at start and every 5 s) settles it once the delivery budget and its margin are past.
      let replay = during
      for (let i = 0; i < 150 && replay.status === 409; i++) {
        await Bun.sleep(100)
        replay = await post(b.url, '/api/v1/send', key, body, 'crash')
      }
      expect(replay.status).toBe(200)
      expect(replay.replayed).toBe('true')
      expect(replay.json.verification_id).toBe(received[0]!.verification_id)
      expect(replay.requestIdHeader).toBe(replay.json.request_id)
      expect(received).toHaveLength(1)
      // Refunded as unknown, and the code stays verifiable.
      expect(env.json('credits', 'balance').balance).toBe(5)
      const code = /\d{6}/.exec(received[0]!.message)![0]
      const verified = await fetch(`${b.url}/api/v1/verify`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ verification_id: received[0]!.verification_id, code }),
      })
      expect(((await verified.json()) as Record<string, unknown>).verified).toBe(true)
    } finally {
      void gw.stop(true)
    }
  })
})
