/** DB thread: commits what the ring holds; the flusher makes it durable and tells the request thread. */
import { makeOps, openDb } from './common.ts'
declare const self: Worker
self.onmessage = (e: MessageEvent) => {
  const { path, SLOTS } = e.data
  const reqs = new Int32Array(e.data.reqs), res = new Int32Array(e.data.res), ctl = new Int32Array(e.data.ctl), cells = new Int32Array(e.data.cells)
  const ops = makeOps(openDb(path))
  let tail = 0
  for (;;) {
    const head = Atomics.load(ctl, 0)
    if (head === tail) {
      Atomics.store(ctl, 2, 1)
      if (Atomics.load(ctl, 0) === tail) Atomics.wait(ctl, 0, tail)
      Atomics.store(ctl, 2, 0)
      continue
    }
    ops.begin()
    for (; tail !== head; tail++) { const s = tail % SLOTS; res[s] = ops.one(reqs[s * 2]!, reqs[s * 2 + 1]!) }
    ops.commit()
    // results are in place; the flusher publishes "durable up to tail" after its fdatasync
    Atomics.store(cells, 0, tail)
    if (Atomics.load(cells, 2) === 1) Atomics.notify(cells, 0)
  }
}
