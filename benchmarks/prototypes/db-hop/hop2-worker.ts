/** The second HTTP thread of hop2.ts. */
import { producer } from './hop2-http.ts'
declare const self: Worker
self.onmessage = (e: MessageEvent) => { const d = e.data; producer(d.ring, d.port, d.bell, d.SLOTS); postMessage('up') }
