/**
 * Sends generated cases (fuzz-cases.ts) to a running server over real sockets
 * and judges every answer: no 5xx from otpd, every answer of otpd JSON with a
 * `request_id` equal to its X-Request-Id, every 4xx message one of the
 * documented ones. Answers that Bun's HTTP parser gives before the request
 * reaches otpd (bare 400/431/505 with no body, for bytes that are not valid
 * HTTP/1.1) are counted apart; so are connections it closes without answering.
 */
import { keyRateLimitMessage, lockoutMessage, Msg, recipientRateLimitMessage } from '../../src/http/error-texts.ts'
import { makeGenerator, type FetchCase, type FuzzKeys, type RawCase } from './fuzz-cases.ts'
import { prng } from './otpd.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const DOCUMENTED = new Set<string>(Object.values(Msg))
const TEMPLATES = [
  new RegExp('^' + escapeRegExp(keyRateLimitMessage(999, 999)).replaceAll('999', '[0-9]+') + '$'),
  new RegExp(
    '^' +
      escapeRegExp(recipientRateLimitMessage(999, 'PERIOD', 999))
        .replaceAll('999', '[0-9]+')
        .replace('PERIOD', '(minute|hour|24 hours)') +
      '$',
  ),
  new RegExp('^' + escapeRegExp(lockoutMessage(999 * 60)).replace('999', '[0-9]+') + '$'),
]
function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
export function isDocumented(message: unknown): boolean {
  return typeof message === 'string' && (DOCUMENTED.has(message) || TEMPLATES.some((t) => t.test(message)))
}

export interface FuzzOptions {
  host: string
  port: number
  keys: FuzzKeys
  count: number
  seed: number
  concurrency?: number
  /** Milliseconds a raw connection may stay silent before it is given up. */
  rawIdleMs?: number
  onProgress?: (done: number) => void
}

export interface FuzzResult {
  cases: number
  fetchCases: number
  rawCases: number
  /** status -> answers from otpd */
  byStatus: Record<string, number>
  /** status -> bare answers from Bun's HTTP parser */
  parserAnswers: Record<string, number>
  closedWithoutAnswer: number
  rawTimedOut: number
  /** cases fetch refused to send (e.g. a header value it will not encode) */
  unsendable: number
  violations: string[]
}

/** Judges one answer of otpd; returns a problem or null. */
export function judge(status: number, headers: Headers, text: string, method: string): string | null {
  if (status >= 500) return `status ${status}: ${text.slice(0, 200)}`
  const rid = headers.get('x-request-id')
  if (!rid || !UUID.test(rid)) return `status ${status} without a request id header`
  // Bun's fetch drops the body of HEAD and TRACE answers (the server sends it for TRACE).
  if (method === 'HEAD' || method === 'TRACE') return null
  let json: Record<string, unknown>
  try {
    json = JSON.parse(text)
  } catch {
    return `status ${status}: body is not JSON: ${JSON.stringify(text.slice(0, 100))}`
  }
  if (json.request_id !== rid) return `status ${status}: request_id ${String(json.request_id)} != header ${rid}`
  if (status >= 400) {
    const message = status === 429 && 'message' in json ? json.message : json.error
    if (!isDocumented(message)) return `status ${status}: undocumented message ${JSON.stringify(message)}`
  } else if (json.success !== true) return `status ${status}: success is not true`
  return null
}

export async function runFuzz(o: FuzzOptions): Promise<FuzzResult> {
  const next = makeGenerator(prng(o.seed), o.keys)
  const r: FuzzResult = {
    cases: 0,
    fetchCases: 0,
    rawCases: 0,
    byStatus: {},
    parserAnswers: {},
    closedWithoutAnswer: 0,
    rawTimedOut: 0,
    unsendable: 0,
    violations: [],
  }
  const base = `http://${o.host}:${o.port}`
  const tally = (m: Record<string, number>, k: number | string) => (m[k] = (m[k] ?? 0) + 1)

  const runFetch = async (c: FetchCase) => {
    const headers = new Headers()
    try {
      for (const [k, v] of c.headers) headers.append(k, v)
    } catch {
      r.unsendable++
      return
    }
    let res: Response
    try {
      res = await fetch(base + c.path, { method: c.method, headers, body: c.body, signal: AbortSignal.timeout(15_000), redirect: 'manual' })
    } catch (err) {
      r.violations.push(`${c.label} ${c.path.slice(0, 60)}: no answer (${err instanceof Error ? err.message : String(err)})`)
      return
    }
    const text = await res.text()
    if (!res.headers.has('x-request-id') && text === '') {
      tally(r.parserAnswers, res.status)
      return
    }
    tally(r.byStatus, res.status)
    const problem = judge(res.status, res.headers, text, c.method)
    if (problem) r.violations.push(`${c.label} ${c.path.slice(0, 60)}: ${problem}`)
  }

  const runRaw = (c: RawCase) =>
    new Promise<void>((resolve) => {
      let buf = Buffer.alloc(0)
      let idle: ReturnType<typeof setTimeout>
      let finished = false
      const finish = (sock?: { end(): void }) => {
        if (finished) return
        finished = true
        clearTimeout(idle)
        sock?.end()
        const answers = parseAnswers(buf)
        if (answers.length === 0) r.closedWithoutAnswer++
        for (const a of answers) {
          if (!a.headers.has('x-request-id') && a.body === '') {
            tally(r.parserAnswers, a.status)
            continue
          }
          tally(r.byStatus, a.status)
          const problem = judge(a.status, a.headers, a.body, 'POST')
          if (problem) r.violations.push(`raw ${c.label}: ${problem}`)
        }
        resolve()
      }
      const arm = (sock: { end(): void }) => {
        clearTimeout(idle)
        idle = setTimeout(() => {
          if (buf.length === 0) r.rawTimedOut++
          finish(sock)
        }, o.rawIdleMs ?? 1000)
      }
      Bun.connect({
        hostname: o.host,
        port: o.port,
        socket: {
          open(sock) {
            sock.write(c.bytes)
            arm(sock)
          },
          data(sock, d) {
            buf = Buffer.concat([buf, d])
            arm(sock)
          },
          close() {
            finish()
          },
          error() {
            finish()
          },
        },
      }).catch((err) => {
        r.violations.push(`raw ${c.label}: cannot connect (${String(err)})`)
        finished = true
        resolve()
      })
    })

  let issued = 0
  let finished = 0
  const worker = async () => {
    while (issued < o.count) {
      issued++
      const c = next()
      r.cases++
      if (c.kind === 'fetch') {
        r.fetchCases++
        await runFetch(c)
      } else {
        r.rawCases++
        await runRaw(c)
      }
      const done = ++finished
      if (o.onProgress && done % 10_000 === 0) o.onProgress(done)
    }
  }
  await Promise.all(Array.from({ length: o.concurrency ?? 16 }, worker))
  return r
}

interface RawAnswer {
  status: number
  headers: Headers
  body: string
}

/** HTTP/1.1 answers in a byte stream (pipelined ones included), by Content-Length. */
export function parseAnswers(buf: Buffer): RawAnswer[] {
  const out: RawAnswer[] = []
  let at = 0
  while (at < buf.length) {
    const end = buf.indexOf('\r\n\r\n', at)
    if (end === -1) break
    const lines = buf.subarray(at, end).toString('latin1').split('\r\n')
    const status = Number(/^HTTP\/1\.[01] ([0-9]{3})/.exec(lines[0] ?? '')?.[1] ?? 0)
    const headers = new Headers()
    for (const l of lines.slice(1)) {
      const i = l.indexOf(':')
      if (i > 0) headers.append(l.slice(0, i).trim(), l.slice(i + 1).trim())
    }
    const len = Number(headers.get('content-length') ?? 0)
    const body = buf.subarray(end + 4, end + 4 + len).toString('utf8')
    out.push({ status, headers, body })
    at = end + 4 + len
  }
  return out
}
