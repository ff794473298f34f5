/** One HTTP thread of hop2.ts (reusePort): publishes each request into its own ring and rings the database thread's bell. */
import { answer, spinHttp } from './common.ts'
export function producer(ring: { reqs: SharedArrayBuffer; res: SharedArrayBuffer; ctl: SharedArrayBuffer }, port: MessagePort, bellBuf: SharedArrayBuffer, SLOTS: number) {
  const reqs = new Int32Array(ring.reqs), res = new Int32Array(ring.res), ctl = new Int32Array(ring.ctl), bell = new Int32Array(bellBuf)
  let head = 0, done = 0
  const waiting: ((r: number) => void)[] = new Array(SLOTS)
  port.onmessage = () => {
    const upTo = Atomics.load(ctl, 1)
    while (done !== upTo) { const s = done % SLOTS; const f = waiting[s]!; waiting[s] = undefined as any; f(res[s]!); done++ }
  }
  Bun.serve({ hostname: '127.0.0.1', port: Number(process.env.PORT), reusePort: true, async fetch(req) {
    const b = (await req.json()) as { seq: number; code: number }
    spinHttp()
    const r = await new Promise<number>((resolve) => {
      const s = head % SLOTS; reqs[s * 2] = b.seq; reqs[s * 2 + 1] = b.code; waiting[s] = resolve; head++
      Atomics.store(ctl, 0, head)
      Atomics.add(bell, 0, 1)
      if (Atomics.load(bell, 1) === 1) Atomics.notify(bell, 0)
    })
    return answer(r)
  } })
}
