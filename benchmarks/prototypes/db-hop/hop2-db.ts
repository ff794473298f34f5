/** The database thread of hop2.ts: serves one ring per HTTP thread, one commit for all of them; each ring is answered through its own MessagePort. */
import { makeOps, openDb } from './common.ts'
declare const self: Worker
self.onmessage = (e: MessageEvent) => {
  const { path, SLOTS } = e.data
  const bell = new Int32Array(e.data.bell)
  const R = (e.data.rings as any[]).map((r) => ({ reqs: new Int32Array(r.reqs), res: new Int32Array(r.res), ctl: new Int32Array(r.ctl), port: r.port as MessagePort, tail: 0 }))
  const ops = makeOps(openDb(path))
  for (;;) {
    const seen = Atomics.load(bell, 0)
    const heads = R.map((r) => Atomics.load(r.ctl, 0))
    if (R.every((r, i) => heads[i] === r.tail)) {
      Atomics.store(bell, 1, 1)
      if (Atomics.load(bell, 0) === seen) Atomics.wait(bell, 0, seen)
      Atomics.store(bell, 1, 0)
      continue
    }
    ops.begin()
    R.forEach((r, i) => { for (; r.tail !== heads[i]; r.tail++) { const s = r.tail % SLOTS; r.res[s] = ops.one(r.reqs[s * 2]!, r.reqs[s * 2 + 1]!) } })
    ops.commit()
    R.forEach((r) => { if (Atomics.load(r.ctl, 1) !== r.tail) { Atomics.store(r.ctl, 1, r.tail); r.port.postMessage(0) } })
  }
}
