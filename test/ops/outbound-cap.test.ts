/**
 * `otpd serve` is not held to Bun's cap of 256 outgoing requests at once
 * (docs/operating.md#outgoing-requests): against a local gateway that answers
 * nothing until it holds them all, more than 256 deliveries are in flight at
 * once. The client side uses node:http, which that cap does not hold.
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import http from 'node:http'
import { afterTest } from '../kit/cleanup.ts'
import { cliEnv, startServer } from '../kit/cli.ts'

setDefaultTimeout(60_000)

const SENDS = 300
const CONFIG = (gateway: string) => `
[fraud]
mode = "off"
[limits]
key_requests_per_minute = 1000000000
recipient_per_minute = 1000000000
recipient_per_hour = 1000000000
recipient_per_day = 1000000000
[delivery]
timeout_ms = 30000
[channels]
sms = ["gw"]
[providers.gw]
type = "webhook"
url = "${gateway}"
secret_env = "CAP_TEST_HOOK_SECRET"
`

/** A gateway that holds every request until `until` are in flight (or `maxMs` passed), then answers them all. */
function holdingGateway(until: number, maxMs: number) {
  const state = { inFlight: 0, peak: 0 }
  const held: (() => void)[] = []
  const releaseAll = () => held.splice(0).forEach((r) => r())
  const timer = setTimeout(releaseAll, maxMs)
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      await req.text()
      state.inFlight++
      state.peak = Math.max(state.peak, state.inFlight)
      if (state.inFlight >= until) releaseAll()
      else await new Promise<void>((resolve) => held.push(resolve))
      state.inFlight--
      return new Response(null, { status: 204 })
    },
  })
  afterTest(() => {
    clearTimeout(timer)
    releaseAll()
    server.stop(true)
  })
  return { url: `http://127.0.0.1:${server.port}/otp`, state }
}

function postSend(url: URL, key: string, recipient: string, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ channel: 'sms', recipient })
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: '/api/v1/send',
        method: 'POST',
        agent,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      },
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

test(`serve holds more than 256 deliveries in flight at once (${SENDS} here)`, async () => {
  const gateway = holdingGateway(SENDS, 15_000)
  const env = await cliEnv(CONFIG(gateway.url), { CAP_TEST_HOOK_SECRET: 'cap-test-secret' })
  const key = env.json('keys', 'create').key as string
  env.run('credits', 'add', String(SENDS))
  const server = await startServer(env)
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity })
  const started = performance.now()
  const statuses = await Promise.all(Array.from({ length: SENDS }, (_, i) => postSend(new URL(server.url), key, `+1415${String(3_000_000 + i)}`, agent)))
  expect(statuses.filter((s) => s !== 200)).toEqual([])
  expect(gateway.state.peak).toBe(SENDS)
  // All were released together once the last arrived, not by the gateway's own time limit.
  expect(performance.now() - started).toBeLessThan(14_000)
})
