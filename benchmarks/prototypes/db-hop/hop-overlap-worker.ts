/** DB thread: runs requests as they come inside an open transaction; commits only when the previous commit is durable. */
import { makeOps, openDb } from './common.ts'
declare const self: Worker
self.onmessage = (e: MessageEvent) => {
  const { path, SLOTS } = e.data
  const reqs = new Int32Array(e.data.reqs), res = new Int32Array(e.data.res), ctl = new Int32Array(e.data.ctl), cells = new Int32Array(e.data.cells), bell = new Int32Array(e.data.bell)
  const ops = makeOps(openDb(path))
  let tail = 0, open = false, handed = 0
  for (;;) {
    const seen = Atomics.load(bell, 0)
    const head = Atomics.load(ctl, 0)
    const inFlight = Atomics.load(cells, 1) !== handed
    if (head !== tail) {
      if (!open) { ops.begin(); open = true }
      for (; tail !== head; tail++) { const s = tail % SLOTS; res[s] = ops.one(reqs[s * 2]!, reqs[s * 2 + 1]!) }
    }
    if (open && !inFlight) {
      ops.commit(); open = false
      handed = tail
      Atomics.store(cells, 0, tail)
      if (Atomics.load(cells, 2) === 1) Atomics.notify(cells, 0)
      continue
    }
    if (head === tail || inFlight) {
      // wait for a new request or the flush to finish
      Atomics.store(bell, 1, 1)
      if (Atomics.load(bell, 0) === seen) Atomics.wait(bell, 0, seen)
      Atomics.store(bell, 1, 0)
    }
  }
}
