/**
 * The WAL flush thread of single-full.ts, hop-flusher.ts and hop-overlap.ts:
 * flushes whenever cells[0] (committed up to) passes cells[1] (durable up
 * to), then publishes cells[1] and posts it. With a `bell` (hop-overlap.ts),
 * also rings the database thread, which waits for the flush to commit again.
 */
import { fdatasyncSync, openSync } from 'node:fs'
declare const self: Worker
self.onmessage = (e: MessageEvent) => {
  const cells = new Int32Array(e.data.cells) // 0: committed up to, 1: durable up to, 2: flusher sleeping
  const bell = e.data.bell ? new Int32Array(e.data.bell) : null // 0: counter, 1: database thread sleeping
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
    if (bell) {
      Atomics.add(bell, 0, 1)
      if (Atomics.load(bell, 1) === 1) Atomics.notify(bell, 0)
    }
    postMessage(c)
  }
}
