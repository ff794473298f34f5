/** Two HTTP threads (reusePort), one database thread, shared-memory rings per HTTP thread. */
import { setup } from './common.ts'
import { producer } from './hop2-http.ts'
const SLOTS = 4096
const path = process.env.DB!
setup(path)
const HTTP = Number(process.env.HTTP_THREADS ?? 2)
const mk = () => ({ reqs: new SharedArrayBuffer(SLOTS * 8), res: new SharedArrayBuffer(SLOTS * 4), ctl: new SharedArrayBuffer(16) })
const bell = new SharedArrayBuffer(8)
const rings = Array.from({ length: HTTP }, mk)
const chans = rings.map(() => new MessageChannel())
const db = new Worker(new URL('./hop2-db.ts', import.meta.url).href)
db.postMessage({ path, SLOTS, bell, rings: rings.map((r, i) => ({ ...r, port: chans[i]!.port1 })) }, chans.map((c) => c.port1))
const ups: Promise<void>[] = []
for (let i = 1; i < HTTP; i++) {
  const w = new Worker(new URL('./hop2-worker.ts', import.meta.url).href)
  ups.push(new Promise((res) => (w.onmessage = () => res())))
  w.postMessage({ ring: rings[i], port: chans[i]!.port2, bell, SLOTS }, [chans[i]!.port2])
}
producer(rings[0]!, chans[0]!.port2, bell, SLOTS)
await Promise.all(ups)
console.log('ready')
