/**
 * Found by the fuzz (fuzz.test.ts): a client that goes away in the middle of
 * its body made the body read throw, which took the route's 500 path and wrote
 * an error-level "request failed" line per disconnect (log noise anyone could
 * cause). A broken body is the client's problem: no fault, no error logged.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createHarness, type Harness } from '../kit/harness.ts'

let h: Harness
let port: number
beforeAll(async () => {
  h = await createHarness()
  port = Number(new URL(h.listen()).port)
})
afterAll(() => h.close())

const errorLines = () => h.logs.filter((l) => l.includes('"level":"error"'))

/** Writes the bytes, waits until the server has started on the body, then disconnects. */
function sendAndLeave(bytes: string): Promise<void> {
  return new Promise<void>((resolve) => {
    void Bun.connect({
      hostname: '127.0.0.1',
      port,
      socket: {
        open: (s) => {
          s.write(bytes)
          setTimeout(() => s.end(), 50)
        },
        data: () => {},
        close: () => resolve(),
      },
    })
  })
}

test('a client that disconnects mid-body: nothing is logged as an error, the server goes on', async () => {
  const head = `POST /api/v1/send HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${h.key}\r\nContent-Type: application/json\r\n`
  await sendAndLeave(head + 'Content-Length: 100\r\n\r\n{"channel":')
  await sendAndLeave(head + 'Transfer-Encoding: chunked\r\n\r\n20\r\n{"channel":"sms"')
  // A request after both disconnects: the server has handled them, and answers normally.
  const next = await fetch(`http://127.0.0.1:${port}/api/v1/verify`, {
    method: 'POST',
    headers: { authorization: `Bearer ${h.key}`, 'content-type': 'application/json' },
    body: '{}',
  })
  expect(next.status).toBe(400)
  expect(errorLines()).toEqual([])
})
