import { makeOps, openDb } from './common.ts'
declare const self: Worker
self.onmessage = (e: MessageEvent) => {
  const { path, SLOTS } = e.data
  const reqs = new Int32Array(e.data.reqs), res = new Int32Array(e.data.res), ctl = new Int32Array(e.data.ctl)
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
    Atomics.store(ctl, 1, tail)
    postMessage(0)
  }
}
