/**
 * One SIGTERM-under-load round (docs/reliability.md), shared by scripts/proofs/shutdown.ts
 * and test/faults/shutdown.test.ts. Clients keep sending over keep-alive connections;
 * a few "slow" clients are in the middle of uploading a body when the signal
 * comes. Then: a new connection must be refused, the slow uploads must still
 * get their answers, the process must exit 0, and the database must be closed
 * cleanly (no -wal left, integrity ok, acknowledged outcomes kept).
 *
 * "Zero failed requests" is checked where it can be: in the ledger. Every
 * send the server processed debits one credit, so debits made during the
 * round must equal the 200s the clients received: a request processed and
 * then cut off would show as an extra debit. And every request written
 * before the signal must be answered. Like any HTTP/1.1 server that stops
 * (nginx, Go's Shutdown), Bun closes idle keep-alive connections at once, so a
 * request written onto one in that instant is reset unread; `serve` first
 * drains for 100 ms so that only requests written after the signal can meet
 * that (counted as refused: the ledger proves none was processed).
 */
import { Database } from 'bun:sqlite'
import { existsSync, statSync } from 'node:fs'
import { type Acknowledged, checkLedger } from './ledger.ts'
import { post, sleep, startServer, type OtpdEnv } from './otpd.ts'

export interface RoundStats {
  beforeSignal: number
  /** sent before the signal and failed (reset unread): must be 0 */
  beforeSignalReset: number
  /** answered 200 to a send, and debits the round made */
  sendsAnswered: number
  debits: number
  afterSignalAnswered: number
  afterSignalRefused: number
  slowAnswered: number
  newConnectionRefused: boolean
  /** ms from the signal until a new connection was refused */
  refusedAfterMs: number
  exitCode: number | null
  stopMs: number
  violations: string[]
}

export interface RoundOptions {
  key: string
  ack: Acknowledged
  rand: () => number
  clients?: number
  slowClients?: number
  /** Load before the signal, in ms. */
  loadMs?: number
}

export async function shutdownRound(env: OtpdEnv, o: RoundOptions): Promise<RoundStats> {
  const s: RoundStats = {
    beforeSignal: 0,
    beforeSignalReset: 0,
    sendsAnswered: 0,
    debits: 0,
    afterSignalAnswered: 0,
    afterSignalRefused: 0,
    slowAnswered: 0,
    newConnectionRefused: false,
    refusedAfterMs: 0,
    exitCode: null,
    stopMs: 0,
    violations: [],
  }
  const debitsBefore = countDebits(env.dbPath)
  const server = await startServer(env)
  let signalled = false
  let stop = false

  const client = async (n: number) => {
    while (!stop) {
      const before = !signalled
      try {
        const recipient = `+1415${String(Math.floor(o.rand() * 1e7)).padStart(7, '0')}`
        const a = await post(server.url, '/api/v1/send', o.key, { channel: n % 2 ? 'sms' : 'voice', recipient, code: '87654321' })
        if (a.status !== 200) s.violations.push(`answer ${a.status} ${JSON.stringify(a.json)}`)
        else {
          s.sendsAnswered++
          o.ack.sends.set(a.json.verification_id, Date.now())
        }
        if (before) s.beforeSignal++
        else s.afterSignalAnswered++
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err)
        if (before) {
          s.beforeSignalReset++
          s.violations.push(`a request sent before the signal failed: ${message}`)
        } else s.afterSignalRefused++
        if (!before) return // the server is going away: this client stops, like a real one would back off
      }
    }
  }

  // Slow clients: headers and half the body now, the rest after the signal.
  let release!: () => void
  const released = new Promise<void>((r) => (release = r))
  const slow = async () => {
    const body = JSON.stringify({ channel: 'sms', recipient: '+15550100001' })
    const head = `POST /api/v1/send HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${o.key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`
    let got = ''
    const done = new Promise<void>((resolve) => {
      void Bun.connect({
        hostname: '127.0.0.1',
        port: server.port,
        socket: {
          open: (sock) => {
            sock.write(head + body.slice(0, 10))
            void released.then(() => sock.write(body.slice(10)))
          },
          data: (_sock, d) => {
            got += Buffer.from(d).toString()
            if (/\r\n\r\n\{.*\}$/s.test(got)) resolve()
          },
          close: () => resolve(),
          error: () => resolve(),
        },
      })
    })
    await done
    const status = Number(/^HTTP\/1\.1 ([0-9]{3})/.exec(got)?.[1] ?? 0)
    if (status === 200 && got.includes('"verification_id"')) s.slowAnswered++
    else s.violations.push(`a request in flight at the signal got ${JSON.stringify(got.slice(0, 200))}`)
  }

  const clients = Array.from({ length: o.clients ?? 8 }, (_, n) => client(n))
  const slows = Array.from({ length: o.slowClients ?? 3 }, slow)
  await sleep(o.loadMs ?? 300 + o.rand() * 700)
  const t0 = performance.now()
  signalled = true
  server.proc.kill('SIGTERM')
  // New connections must be refused soon after the signal (the slow uploads keep the process alive meanwhile).
  for (let i = 0; i < 100 && !s.newConnectionRefused; i++) {
    await sleep(20)
    s.newConnectionRefused = await refused(server.port)
  }
  s.refusedAfterMs = Math.round(performance.now() - t0)
  if (!s.newConnectionRefused) s.violations.push('new connections were still accepted 2 s after SIGTERM')
  release()
  await Promise.all(slows)
  const timer = setTimeout(() => server.proc.kill('SIGKILL'), 15_000)
  s.exitCode = await server.proc.exited
  clearTimeout(timer)
  s.stopMs = Math.round(performance.now() - t0)
  stop = true
  await Promise.all(clients)
  if (s.exitCode !== 0) s.violations.push(`exit code ${s.exitCode} after SIGTERM:\n${server.output().slice(-1000)}`)
  const wal = `${env.dbPath}-wal`
  if (existsSync(wal) && statSync(wal).size > 0) s.violations.push(`${wal} left behind with ${statSync(wal).size} bytes: the database was not closed`)
  const errors = server
    .output()
    .split('\n')
    .filter((l) => l.includes('"level":"error"'))
  for (const l of errors) s.violations.push(`error logged: ${l.slice(0, 300)}`)
  s.debits = countDebits(env.dbPath) - debitsBefore
  if (s.debits !== s.sendsAnswered)
    s.violations.push(`${s.debits} sends were processed (debited) but ${s.sendsAnswered} answered: a processed request lost its answer`)
  const check = await checkLedger(env.dbPath, o.ack, { allSettled: true })
  s.violations.push(...check.violations)
  return s
}

function countDebits(path: string): number {
  const db = new Database(path, { readonly: true })
  try {
    return db.query<{ n: number }, []>(`SELECT count(*) AS n FROM credit_ledger WHERE kind = 'debit'`).get()!.n
  } finally {
    db.close()
  }
}

/** True when a new TCP connection to the port is refused. */
async function refused(port: number): Promise<boolean> {
  try {
    const sock = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data: () => {} } })
    sock.end()
    return false
  } catch {
    return true
  }
}
