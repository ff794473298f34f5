/** The worker thread owns the connection; requests and results cross in shared memory, one message per batch back. */
import { Elysia } from 'elysia'
import { answer, spinHttp, setup } from './common.ts'
// Ring of requests in shared memory: [seq, code] per slot; results per slot.
// Unguarded: wrk's 64 connections never have more than 64 requests in it.
const SLOTS = 4096
// PUBLISH=turn: once per event-loop turn; otherwise at once, so the worker works beside the request thread.
const PER_TURN = process.env.PUBLISH === 'turn'
const path = process.env.DB!
setup(path)
const reqs = new Int32Array(new SharedArrayBuffer(SLOTS * 8))
const res = new Int32Array(new SharedArrayBuffer(SLOTS * 4))
const ctl = new Int32Array(new SharedArrayBuffer(16)) // 0: published head, 1: done up to, 2: worker sleeping
const worker = new Worker(new URL('./hop-worker.ts', import.meta.url).href)
worker.postMessage({ path, reqs: reqs.buffer, res: res.buffer, ctl: ctl.buffer, SLOTS })
let head = 0, done = 0
const waiting: ((r: number) => void)[] = new Array(SLOTS)
let scheduled = false
function publish() {
  scheduled = false
  Atomics.store(ctl, 0, head)
  if (Atomics.load(ctl, 2) === 1) Atomics.notify(ctl, 0)
}
worker.onmessage = () => {
  const upTo = Atomics.load(ctl, 1)
  while (done !== upTo) { const s = done % SLOTS; const f = waiting[s]!; waiting[s] = undefined as any; f(res[s]!); done++ }
}
const handler = async (req: Request) => {
  const b = (await req.json()) as { seq: number; code: number }
  spinHttp()
  const r = await new Promise<number>((resolve) => {
    const s = head % SLOTS; reqs[s * 2] = b.seq; reqs[s * 2 + 1] = b.code; waiting[s] = resolve; head++
    if (!PER_TURN) publish()
    else if (!scheduled) { scheduled = true; setImmediate(publish) }
  })
  return answer(r)
}
if (process.env.ELYSIA) new Elysia().post('/', ({ request }) => handler(request), { parse: 'none' }).listen({ hostname: '127.0.0.1', port: Number(process.env.PORT) })
else Bun.serve({ hostname: '127.0.0.1', port: Number(process.env.PORT), fetch: handler })
console.log('ready')
