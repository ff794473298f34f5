// The WAL flush thread of hop-overlap.ts.
/** Flushes when cells[0] (handed) passes cells[1] (durable); publishes cells[1], rings the DB thread's bell, posts to the request thread. */
import { fdatasyncSync, openSync } from 'node:fs'
declare const self: Worker
self.onmessage = (e: MessageEvent) => {
  const cells = new Int32Array(e.data.cells) // 0: handed up to, 1: durable up to, 2: flusher sleeping
  const bell = new Int32Array(e.data.bell) // 0: counter, 1: db thread sleeping
  const fd = openSync(e.data.wal, 'r')
  let flushed = 0
  for (;;) {
    const c = Atomics.load(cells, 0)
    if (c === flushed) {
      Atomics.store(cells, 2, 1)
      if (Atomics.load(cells, 0) === flushed) Atomics.wait(cells, 0, flushed)
      Atomics.store(cells, 2, 0)
      continue
    }
    fdatasyncSync(fd)
    flushed = c
    Atomics.store(cells, 1, c)
    Atomics.add(bell, 0, 1)
    if (Atomics.load(bell, 1) === 1) Atomics.notify(bell, 0)
    postMessage(c)
  }
}
