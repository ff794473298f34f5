/** Behaviour that only shows over a real socket: Bun's own limits must never answer for us. */
import { expect, test } from 'bun:test'
import { harnessPerTest } from '../kit/harness.ts'

const start = harnessPerTest()

const big = JSON.stringify({ channel: 'sms', recipient: '+15550100001', pad: 'x'.repeat(1_000_000) })

test('a 1 MB body without a key gets the JSON 401, not a bare 413 from the runtime', async () => {
  const h = await start()
  const res = await fetch(h.listen() + '/api/v1/send', { method: 'POST', headers: { 'content-type': 'application/json' }, body: big })
  expect(res.status).toBe(401)
  expect(((await res.json()) as { error: string }).error).toBe('API key is required. Provide it via Authorization: Bearer <token> or x-api-key header')
})

test('a 1 MB body with a key gets the JSON 413 with a request id', async () => {
  const h = await start()
  const res = await fetch(h.listen() + '/api/v1/send', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${h.key}` },
    body: big,
  })
  expect(res.status).toBe(413)
  const body = await res.json()
  expect(body).toEqual({ error: 'Request body too large', request_id: res.headers.get('x-request-id') })
})

test('a streamed body (no Content-Length) over 16 KiB gets the JSON 413', async () => {
  const h = await start()
  const chunk = new TextEncoder().encode('x'.repeat(8192))
  let sent = 0
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent++ < 10) controller.enqueue(chunk)
      else controller.close()
    },
  })
  const res = await fetch(h.listen() + '/api/v1/verify', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${h.key}` },
    body: stream,
  })
  expect(res.status).toBe(413)
  expect(((await res.json()) as { error: string }).error).toBe('Request body too large')
})
