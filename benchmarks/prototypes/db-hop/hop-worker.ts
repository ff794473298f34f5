/**
 * The database thread of hop.ts: takes what the ring holds, runs it in one
 * transaction, publishes the results, one message per batch. FSYNC=1: it
 * fdatasyncs the WAL after each commit, before publishing (FULL, flushed
 * inline; the requests that arrive meanwhile form the next batch).
 */
import { fdatasyncSync, openSync } from 'node:fs'
import { makeOps, openDb } from './common.ts'
declare const self: Worker
self.onmessage = (e: MessageEvent) => {
  const { path, SLOTS } = e.data
  const reqs = new Int32Array(e.data.reqs), res = new Int32Array(e.data.res), ctl = new Int32Array(e.data.ctl)
  const ops = makeOps(openDb(path))
  const walFd = process.env.FSYNC ? openSync(path + '-wal', 'r') : -1
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
    if (walFd >= 0) fdatasyncSync(walFd)
    Atomics.store(ctl, 1, tail)
    postMessage(0)
  }
}
