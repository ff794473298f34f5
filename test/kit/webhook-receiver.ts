/**
 * A real HTTP receiver on loopback for otpd's events, and an independent
 * check of Standard Webhooks signatures written from the specification
 * (WebCrypto, not the product's signer): `v1,<base64 HMAC-SHA256(key,
 * "<id>.<timestamp>.<body>")>`, key = base64-decoded part after `whsec_`,
 * several signatures space-separated.
 */
import { afterTest } from './cleanup.ts'

export interface Received {
  id: string
  timestamp: string
  signatures: string[]
  body: string
  json: Record<string, any>
  headers: Headers
}

export interface Receiver {
  url: string
  received: Received[]
  /** Answers with this status next (a queue); 200 when empty. */
  statuses: number[]
  /** While set, requests wait for it before being answered. */
  hold: Promise<void> | null
  /** Resolves at the n-th request (1-based). */
  arrival(n: number): Promise<Received>
  /** Resolves with the first request, received already or to come, that `match` accepts. */
  arrivalOf(match: (r: Received) => boolean): Promise<Received>
  stop(): void
}

export function startReceiver(): Receiver {
  const waiters: { n: number; resolve: (r: Received) => void }[] = []
  const matchers: { match: (r: Received) => boolean; resolve: (r: Received) => void }[] = []
  const rx: Receiver = {
    url: '',
    received: [],
    statuses: [],
    hold: null,
    arrival: (n) =>
      new Promise((resolve) => {
        if (rx.received.length >= n) resolve(rx.received[n - 1]!)
        else waiters.push({ n, resolve })
      }),
    arrivalOf: (match) =>
      new Promise((resolve) => {
        const seen = rx.received.find(match)
        if (seen) resolve(seen)
        else matchers.push({ match, resolve })
      }),
    stop: () => void server.stop(true),
  }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const body = await req.text()
      const r: Received = {
        id: req.headers.get('webhook-id') ?? '',
        timestamp: req.headers.get('webhook-timestamp') ?? '',
        signatures: (req.headers.get('webhook-signature') ?? '').split(' '),
        body,
        json: JSON.parse(body),
        headers: req.headers,
      }
      rx.received.push(r)
      for (const w of waiters.filter((w) => w.n <= rx.received.length)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve(rx.received[w.n - 1]!)
      }
      for (const m of matchers.filter((m) => m.match(r))) {
        matchers.splice(matchers.indexOf(m), 1)
        m.resolve(r)
      }
      if (rx.hold) await rx.hold
      return new Response('ok', { status: rx.statuses.shift() ?? 200 })
    },
  })
  rx.url = `http://127.0.0.1:${server.port}/hook`
  return rx
}

/** The set-up of a file whose tests start receivers: the returned function starts one, stopped when the test ends. */
export function receiverPerTest(): () => Receiver {
  return () => {
    const rx = startReceiver()
    afterTest(() => rx.stop())
    return rx
  }
}

/** Whether `signature` (one `v1,...` item) is valid for `secret` over this delivery. */
export async function signatureValid(secret: string, r: Pick<Received, 'id' | 'timestamp' | 'body'>, signature: string): Promise<boolean> {
  if (!secret.startsWith('whsec_')) return false
  const comma = signature.indexOf(',')
  if (comma < 0 || signature.slice(0, comma) !== 'v1') return false
  const keyBytes = Uint8Array.from(atob(secret.slice('whsec_'.length)), (c) => c.charCodeAt(0))
  const key = await crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify'])
  const sig = Uint8Array.from(atob(signature.slice(comma + 1)), (c) => c.charCodeAt(0))
  return crypto.subtle.verify('HMAC', key, sig, new TextEncoder().encode(`${r.id}.${r.timestamp}.${r.body}`))
}
