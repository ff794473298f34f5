/**
 * A local HTTP server standing in for a vendor API (Twilio, Vonage, a
 * webhook receiver): records every request exactly (method, path, headers,
 * raw body) and answers what the test says.
 */
export interface Recorded {
  method: string
  path: string
  headers: Record<string, string>
  body: string
}

export type Responder = (req: Recorded) => Response | Promise<Response>

export interface VendorStub {
  url: string
  port: number
  requests: Recorded[]
  respond: Responder
  close(): void
}

export function startVendorStub(respond: Responder = () => Response.json({}, { status: 201 })): VendorStub {
  const stub: VendorStub = {
    url: '',
    port: 0,
    requests: [],
    respond,
    close: () => server.stop(true),
  }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const u = new URL(req.url)
      const recorded: Recorded = {
        method: req.method,
        path: u.pathname + u.search,
        headers: Object.fromEntries(req.headers.entries()),
        body: await req.text(),
      }
      stub.requests.push(recorded)
      return stub.respond(recorded)
    },
  })
  stub.port = server.port!
  stub.url = `http://127.0.0.1:${server.port}`
  return stub
}

/** A port nothing listens on (bound, then released). */
export function refusedPort(): number {
  const s = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const port = s.port!
  s.stop(true)
  return port
}

/** A responder that never answers (until the test ends). */
export const hang: Responder = () => new Promise<Response>(() => {})
