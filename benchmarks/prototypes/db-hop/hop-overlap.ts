/** FULL, overlapped: the database thread runs the next requests in an open transaction while the previous commit is flushed (flusher.ts), and commits them once it is durable. */
import { answer, setup, spinHttp, openDb } from './common.ts'
const SLOTS = 4096
const path = process.env.DB!
setup(path)
{ const d = openDb(path); d.run('BEGIN IMMEDIATE'); d.run('COMMIT'); (globalThis as any).keep = d }
const reqs = new Int32Array(new SharedArrayBuffer(SLOTS * 8))
const res = new Int32Array(new SharedArrayBuffer(SLOTS * 4))
const ctl = new Int32Array(new SharedArrayBuffer(16))
const cells = new Int32Array(new SharedArrayBuffer(12))
const bell = new Int32Array(new SharedArrayBuffer(8))
const fl = new Worker(new URL('./flusher.ts', import.meta.url).href)
fl.postMessage({ cells: cells.buffer, bell: bell.buffer, wal: path + '-wal' })
const worker = new Worker(new URL('./hop-overlap-worker.ts', import.meta.url).href)
worker.postMessage({ path, reqs: reqs.buffer, res: res.buffer, ctl: ctl.buffer, cells: cells.buffer, bell: bell.buffer, SLOTS })
let head = 0, done = 0
const waiting: ((r: number) => void)[] = new Array(SLOTS)
fl.onmessage = () => {
  const upTo = Atomics.load(cells, 1)
  while (done !== upTo) { const s = done % SLOTS; const f = waiting[s]!; waiting[s] = undefined as any; f(res[s]!); done++ }
}
Bun.serve({ hostname: '127.0.0.1', port: Number(process.env.PORT), async fetch(req) {
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
console.log('ready')
