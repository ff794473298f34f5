/**
 * Outbound answers are read to 64 KiB at most (docs/delivery.md#answers-otpd-reads):
 * a vendor, a webhook gateway or an event receiver answering hundreds of
 * megabytes costs otpd 64 KiB, and the connection is closed under it. The
 * stub is raw TCP: it declares a 512 MiB body, streams it as fast as the
 * socket takes it, and records how much it could write before otpd closed
 * the connection. The outcome is the status's, as for a short answer.
 */
import { expect, test } from 'bun:test'
import { createServer, type Server, type Socket } from 'node:net'
import { ProviderOptions } from '../../src/delivery/options.ts'
import { post } from '../../src/delivery/http.ts'
import { RecipientRejectedError } from '../../src/delivery/provider.ts'
import { readWebhook, WebhookProvider } from '../../src/delivery/webhook-provider.ts'
import { postEvent } from '../../src/events/post.ts'
import { MAX_ANSWER_BYTES, readAtMost } from '../../src/lib/bounded-body.ts'
import { outbound, OUTBOUND_AT } from '../kit/outbound.ts'
import { closeAfterTest } from '../kit/cleanup.ts'

const DECLARED = 512 * 1024 * 1024
const CHUNK = Buffer.alloc(256 * 1024, 'x')
const MiB = 1024 * 1024

interface HugeStub {
  url: string
  /** Resolves once the connection ended: how many body bytes were written by then, and whether otpd closed it first. */
  done: Promise<{ written: number; closedEarly: boolean }>
  server: Server
}

/** Answers the first request with `status` and a 512 MiB body, written while the socket takes it. */
function hugeStub(status: number, body: Buffer = CHUNK): Promise<HugeStub> {
  let resolve!: (v: { written: number; closedEarly: boolean }) => void
  const done = new Promise<{ written: number; closedEarly: boolean }>((r) => (resolve = r))
  const server = createServer((socket: Socket) => {
    let written = 0
    let closed = false
    socket.on('error', () => undefined)
    socket.on('close', () => {
      closed = true
      resolve({ written, closedEarly: written < DECLARED })
    })
    socket.once('data', () => {
      socket.write(`HTTP/1.1 ${status} X\r\ncontent-type: application/json\r\ncontent-length: ${DECLARED}\r\nconnection: close\r\n\r\n`)
      const pump = () => {
        while (!closed && written < DECLARED) {
          written += body.byteLength
          if (!socket.write(body)) return void socket.once('drain', pump)
        }
        if (!closed) socket.end()
      }
      pump()
    })
  })
  closeAfterTest(server)
  return new Promise((ok) =>
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port
      ok({ url: `http://127.0.0.1:${port}`, done, server })
    }),
  )
}

/** The body bytes the stub wrote: under 16 MiB of the 512 (64 KiB read, the rest what the sockets' buffers held). */
async function expectCut(stub: HugeStub): Promise<void> {
  const { written, closedEarly } = await stub.done
  expect(closedEarly).toBe(true)
  expect(written).toBeLessThan(16 * MiB)
}

test('readAtMost: the first 64 KiB, marked truncated, and the stream cancelled; a short body whole', async () => {
  let pulled = 0
  let cancelled = false
  const endless = new ReadableStream<Uint8Array>({
    pull(c) {
      pulled++
      c.enqueue(new Uint8Array(10_000).fill(65))
    },
    cancel() {
      cancelled = true
    },
  })
  const cut = await readAtMost(new Response(endless))
  expect([cut.bytes.byteLength, cut.truncated, cancelled]).toEqual([MAX_ANSWER_BYTES, true, true])
  expect(pulled).toBeLessThan(10)
  const short = await readAtMost(new Response('{"sid":"SM1"}'))
  expect([new TextDecoder().decode(short.bytes), short.truncated]).toEqual(['{"sid":"SM1"}', false])
  expect((await readAtMost(new Response(null, { status: 204 }))).bytes.byteLength).toBe(0)
})

test('a vendor answering 512 MiB: post reads 64 KiB, closes the connection, and answers the status with no JSON (memory stays bounded)', async () => {
  const stub = await hugeStub(400)
  Bun.gc(true)
  const before = process.memoryUsage().rss
  const res = await post(`${stub.url}/v1/messages`, { headers: {}, body: '{}' }, AbortSignal.timeout(20_000))
  expect(res).toEqual({ status: 400, json: undefined })
  await expectCut(stub)
  expect(process.memoryUsage().rss - before).toBeLessThan(64 * MiB)
})

test('the webhook gateway answering 2xx or 422 with 512 MiB: the same outcomes as a short answer (sent; recipient rejected)', async () => {
  for (const [status, outcome] of [
    [200, 'sent'],
    [422, 'rejected'],
  ] as const) {
    const stub = await hugeStub(status)
    const o = new ProviderOptions('gateway', { type: 'webhook', url: `${stub.url}/otp`, secret_env: 'S' }, { S: 'whsec-test-0123456789abcdef' })
    const p = new WebhookProvider('gateway', readWebhook(o, ['sms']), () => OUTBOUND_AT)
    const sent = p.send(outbound(), AbortSignal.timeout(20_000))
    if (outcome === 'sent') await sent
    else await expect(sent).rejects.toBeInstanceOf(RecipientRejectedError)
    await expectCut(stub)
  }
})

test('an event receiver answering 200 or 500 with 512 MiB: delivered or failed as the status says, the connection closed after 64 KiB', async () => {
  const ok = await hugeStub(200)
  expect(await postEvent(`${ok.url}/events`, { 'content-type': 'application/json' }, '{}')).toEqual({ ok: true, status: 200 })
  await expectCut(ok)
  const failed = await hugeStub(500)
  expect(await postEvent(`${failed.url}/events`, { 'content-type': 'application/json' }, '{}')).toEqual({ ok: false, error: 'HTTP 500' })
  await expectCut(failed)
})
