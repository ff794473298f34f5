/** Request thread does everything; a flusher thread fdatasyncs the WAL; answers after the flush (otpd today). */
import { answer, makeOps, openDb, setup, spinHttp } from './common.ts'
const path = process.env.DB!
setup(path)
const db = openDb(path)
const ops = makeOps(db)
db.run('BEGIN IMMEDIATE'); db.run('COMMIT') // make sure the -wal exists
const cells = new Int32Array(new SharedArrayBuffer(12))
const fl = new Worker(new URL('./flusher.ts', import.meta.url).href)
fl.postMessage({ cells: cells.buffer, wal: path + '-wal' })
let queue: { seq: number; code: number; resolve: (r: number) => void }[] = []
let scheduled = false
let gen = 0
const pending: { gen: number; settle: () => void }[] = []
fl.onmessage = (e) => { const upTo = e.data as number; while (pending.length && pending[0]!.gen <= upTo) pending.shift()!.settle() }
function flush() {
  scheduled = false
  const batch = queue; queue = []
  ops.begin()
  const res = batch.map((q) => ops.one(q.seq, q.code))
  ops.commit()
  const g = ++gen
  pending.push({ gen: g, settle: () => batch.forEach((q, i) => q.resolve(res[i]!)) })
  Atomics.store(cells, 0, g)
  if (Atomics.load(cells, 2) === 1) Atomics.notify(cells, 0)
}
Bun.serve({ hostname: '127.0.0.1', port: Number(process.env.PORT), async fetch(req) {
  const b = (await req.json()) as { seq: number; code: number }
  spinHttp()
  const r = await new Promise<number>((resolve) => { queue.push({ seq: b.seq, code: b.code, resolve }); if (!scheduled) { scheduled = true; setImmediate(flush) } })
  return answer(r)
} })
console.log('ready')
