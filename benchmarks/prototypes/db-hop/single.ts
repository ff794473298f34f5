/** The request thread does everything: group commit per event-loop turn. */
import { Elysia } from 'elysia'
import { answer, spinHttp, makeOps, openDb, setup } from './common.ts'
const path = process.env.DB!
setup(path)
const ops = makeOps(openDb(path))
let queue: { seq: number; code: number; resolve: (r: number) => void }[] = []
let scheduled = false
function flush() {
  scheduled = false
  const batch = queue; queue = []
  ops.begin()
  const res = batch.map((q) => ops.one(q.seq, q.code))
  ops.commit()
  batch.forEach((q, i) => q.resolve(res[i]!))
}
const handler = async (req: Request) => {
  const b = (await req.json()) as { seq: number; code: number }
  spinHttp()
  const r = await new Promise<number>((resolve) => { queue.push({ seq: b.seq, code: b.code, resolve }); if (!scheduled) { scheduled = true; setImmediate(flush) } })
  return answer(r)
}
if (process.env.ELYSIA) new Elysia().post('/', ({ request }) => handler(request), { parse: 'none' }).listen({ hostname: '127.0.0.1', port: Number(process.env.PORT) })
else Bun.serve({ hostname: '127.0.0.1', port: Number(process.env.PORT), fetch: handler })
console.log('ready')
