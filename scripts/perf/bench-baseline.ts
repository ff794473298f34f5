/**
 * The benchmark's baseline: the fastest thing Bun does for the same exchange.
 * A bare Bun.serve that reads and parses the JSON body and answers a JSON body
 * of the same size as otpd's answer on that path (BENCH_SEND_BYTES,
 * BENCH_VERIFY_BYTES). No auth, no database. Prints "listening on URL".
 */
const sizes: Record<string, number> = {
  '/api/v1/send': Number(process.env.BENCH_SEND_BYTES ?? 160),
  '/api/v1/verify': Number(process.env.BENCH_VERIFY_BYTES ?? 110),
}

/** A JSON object of exactly `bytes` bytes, echoing one parsed field so the parse is used. */
function answer(bytes: number, echo: string): string {
  const base = JSON.stringify({ success: true, echo, pad: '' })
  return JSON.stringify({ success: true, echo, pad: 'x'.repeat(Math.max(0, bytes - base.length)) })
}

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    const path = new URL(req.url).pathname
    const body = (await req.json()) as Record<string, unknown>
    const echo = String(body.channel ?? body.code ?? '').slice(0, 6)
    return new Response(answer(sizes[path] ?? 100, echo), { headers: { 'content-type': 'application/json; charset=utf-8' } })
  },
})
console.log(`baseline listening on http://127.0.0.1:${server.port}`)
