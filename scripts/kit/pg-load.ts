/**
 * Mixed send/verify load from concurrent clients over several nodes, for the
 * PostgreSQL fault tests (test/pg/*.test.ts) and scripts/proofs/crash-pg.ts: every answer is classified, and what a client was
 * told (a 200 send, a verified code) is recorded as acknowledged, so the
 * database can be checked against it afterwards (scripts/kit/ledger.ts).
 * A network error (a node killed under the request) acknowledges nothing.
 */
import { type Acknowledged, emptyAcknowledged } from './ledger.ts'
import { post } from './otpd.ts'

export interface Answer {
  at: number
  node: number
  what: 'send' | 'verify'
  status: number | 'network'
  body: Record<string, unknown>
}

export interface Load {
  ack: Acknowledged
  answers: Answer[]
  /** Nodes that clients may use now (a killed node is taken out, a restarted one put back). */
  targets: Map<number, string>
  stop(): Promise<void>
}

export function startLoad(key: string, targets: Map<number, string>, clients = 8): Load {
  const ack = emptyAcknowledged()
  const answers: Answer[] = []
  const open: { id: string; code: string }[] = []
  let running = true
  let n = 0
  const one = async () => {
    const nodes = [...targets.entries()]
    if (nodes.length === 0) return Bun.sleep(10)
    const [node, url] = nodes[n++ % nodes.length]!
    const at = Date.now()
    const verify = open.length > 0 && n % 3 === 0
    try {
      if (verify) {
        // One verify in three guesses wrong, favouring codes already guessed wrong: failed attempts,
        // recipient failures and lockouts to check.
        const wrong = n % 9 === 0
        const again = wrong ? open.findIndex((o) => ack.invalid.has(o.id)) : -1
        const v = open.splice(again >= 0 ? again : Math.floor(Math.random() * open.length), 1)[0]!
        const a = await post(url, '/api/v1/verify', key, { verification_id: v.id, code: wrong ? '00000000' : v.code })
        answers.push({ at, node, what: 'verify', status: a.status, body: a.json })
        if (a.status === 200 && a.json.verified === true) ack.verified.add(v.id)
        else if (a.status === 200 && a.json.message === 'Invalid code') {
          ack.invalid.set(v.id, (ack.invalid.get(v.id) ?? 0) + 1)
          open.push(v)
        } else if (a.status === 429 && String(a.json.message ?? a.json.error).startsWith('Too many failed attempts')) ack.locked.set(v.id, Date.now())
        else if (a.status !== 200) open.push(v)
      } else {
        const code = String(10_000_000 + Math.floor(Math.random() * 89_999_999))
        const recipient = `+1415${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`
        const a = await post(url, '/api/v1/send', key, { channel: 'sms', recipient, code, expires_in: 3600 })
        answers.push({ at, node, what: 'send', status: a.status, body: a.json })
        if (a.status === 200) {
          ack.sends.set(String(a.json.verification_id), Date.now())
          open.push({ id: String(a.json.verification_id), code })
        }
      }
    } catch {
      answers.push({ at, node, what: verify ? 'verify' : 'send', status: 'network', body: {} })
      await Bun.sleep(5)
    }
  }
  const loops = Array.from({ length: clients }, async () => {
    while (running) await one()
  })
  return {
    ack,
    answers,
    targets,
    stop: async () => {
      running = false
      await Promise.all(loops)
    },
  }
}
