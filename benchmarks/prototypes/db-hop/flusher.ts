// The WAL flush thread of single-full.ts and hop-flusher.ts.
/** Flushes the WAL whenever cells[0] (committed generation) passes cells[1] (flushed); then publishes cells[1] and posts. */
import { fdatasyncSync, openSync } from 'node:fs'
declare const self: Worker
self.onmessage = (e: MessageEvent) => {
  const cells = new Int32Array(e.data.cells) // 0: committed up to, 1: durable up to, 2: flusher sleeping
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
    postMessage(c)
  }
}
