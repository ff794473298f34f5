#!/usr/bin/env bun
/**
 * Pumping simulation (docs/fraud-guard.md): one
 * simulated day on the injected clock, in process with the real app on a real
 * SQLite file, run once in `enforce` and once in `monitor` mode on the same
 * traffic (a seeded generator):
 *
 * - legitimate: 2,000 sends across 5 countries the account already used
 *   (approvals in the days before), 80 % approved within 2 minutes, each from
 *   its own end-user IP;
 * - attack: 5,000 sends to random numbers in 3 prefixes of a country never
 *   used before (UZ), from a pool of 500 IPs, none approved.
 *
 * Exits non-zero unless: enforce charges at most 60 attack sends and refuses
 * no legitimate send; monitor refuses nothing and reports the same decisions
 * (the same sends, by the same rules) that enforce made.
 *
 * Usage: bun scripts/proofs/fraud-sim.ts [--scale F] [--seed N] [--json]
 * (`--scale 0.25` runs a quarter of the traffic in the same day.)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { buildServer } from '../../src/app/index.ts'
import { resolveConfig } from '../../src/app/load-config.ts'
import { ManualClock } from '../../src/lib/clock.ts'
import { createMemoryLogger } from '../../src/lib/logger.ts'
import { destinationOf } from '../../src/lib/phone-country.ts'
import type { Delivery } from '../../src/otp/ports/index.ts'
import type { OutboundMessage } from '../../src/otp/types.ts'

const { values: args } = parseArgs({
  options: { scale: { type: 'string', default: '1' }, seed: { type: 'string', default: '24' }, json: { type: 'boolean', default: false } },
})
const SCALE = Number(args.scale)
const SEED = Number(args.seed)
const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
const START = Date.UTC(2026, 5, 1)

/** Mulberry32: the same traffic for both modes. */
function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const digits = (r: () => number, n: number) => Array.from({ length: n }, () => Math.floor(r() * 10)).join('')
/** Number makers per country the account already used: each must map to its country (checked below). */
const LEGIT: Record<string, (r: () => number) => string> = {
  US: (r) => `+1${['212', '415', '617', '312', '206'][Math.floor(r() * 5)]}${2 + Math.floor(r() * 8)}${digits(r, 6)}`,
  GB: (r) => `+4474${digits(r, 8)}`,
  DE: (r) => `+49151${digits(r, 8)}`,
  FR: (r) => `+336${digits(r, 8)}`,
  BR: (r) => `+55119${digits(r, 8)}`,
}
const ATTACK_PREFIXES = ['+99890123', '+99893555', '+99897777']

interface Event {
  at: number
  kind: 'send' | 'verify'
  /** Index of the send (a verify names the send it approves). */
  send: number
}
interface Send {
  legit: boolean
  country: string
  recipient: string
  ip: string
}

/** The day's traffic: sends at uniform random times, legitimate approvals 5-120 s after their send. */
function traffic(seed: number) {
  const r = rng(seed)
  const sends: Send[] = []
  const events: Event[] = []
  const countries = Object.keys(LEGIT)
  const legitCount = Math.round(2000 * SCALE)
  const attackCount = Math.round(5000 * SCALE)
  for (let i = 0; i < legitCount; i++) {
    const country = countries[i % countries.length]!
    const recipient = LEGIT[country]!(r)
    sends.push({ legit: true, country, recipient, ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` })
    const at = START + Math.floor(r() * DAY)
    events.push({ at, kind: 'send', send: sends.length - 1 })
    if (r() < 0.8) events.push({ at: at + 5_000 + Math.floor(r() * 115_000), kind: 'verify', send: sends.length - 1 })
  }
  for (let i = 0; i < attackCount; i++) {
    const recipient = ATTACK_PREFIXES[Math.floor(r() * 3)]! + digits(r, 4)
    sends.push({ legit: false, country: 'UZ', recipient, ip: `198.51.${Math.floor(r() * 2)}.${Math.floor(r() * 250)}` })
    events.push({ at: START + Math.floor(r() * DAY), kind: 'send', send: sends.length - 1 })
  }
  for (const s of sends) {
    const c = destinationOf(s.recipient).country
    if (c !== s.country) throw new Error(`simulation bug: ${s.recipient} is ${c}, not ${s.country}`)
  }
  // Stable order: a send before the verify of the same instant.
  events.sort((a, b) => a.at - b.at || (a.kind === b.kind ? a.send - b.send : a.kind === 'send' ? -1 : 1))
  return { sends, events }
}

/** Remembers each message's code, so a legitimate user can type it. */
class CodeBook implements Delivery {
  codes = new Map<string, string>()
  async deliver(m: OutboundMessage): Promise<{ provider: string }> {
    this.codes.set(m.verificationId, /(\d{4,10})(?!.*\d)/.exec(m.text)![1]!)
    return { provider: 'sim' }
  }
}

interface Outcome {
  mode: string
  legit: { sends: number; accepted: number; refused: number; approved: number }
  attack: { sends: number; charged: number; refused: number }
  /** Send index -> the rule that refused it (enforce) or would have (monitor). */
  decisions: Map<number, string>
  refusedByRule: Record<string, number>
  blocks: string[]
  ms: number
}

async function run(mode: 'enforce' | 'monitor'): Promise<Outcome> {
  const began = performance.now()
  const dir = mkdtempSync(join(tmpdir(), 'otpd-fraud-sim-'))
  const clock = new ManualClock(START - 3 * DAY)
  const delivery = new CodeBook()
  const logger = createMemoryLogger()
  // NORMAL: the simulation measures decisions, not durability (one fsync per send would only slow it).
  const config = resolveConfig({ database: { path: join(dir, 'otpd.db'), synchronous: 'NORMAL' }, fraud: { mode } })
  const server = await buildServer(config, { clock, delivery, logger })
  try {
    const key = (await server.admin.createKey({ name: 'sim' })).key
    await server.admin.addCredits(1_000_000)
    const call = async (path: string, body: unknown) => {
      const res = await server.http.handle(
        new Request(`http://localhost${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
      )
      return { status: res.status, json: (await res.json()) as Record<string, any> }
    }
    // The days before: each legitimate country has approvals (the account used it).
    const warm = rng(SEED + 1)
    for (const [country, make] of Object.entries(LEGIT)) {
      for (let i = 0; i < 5; i++) {
        const s = await call('/api/v1/send', { channel: 'sms', recipient: make(warm) })
        if (s.status !== 200) throw new Error(`warm-up send to ${country} answered ${s.status}`)
        await call('/api/v1/verify', { verification_id: s.json.verification_id, code: delivery.codes.get(s.json.verification_id) })
        clock.advance(HOUR)
      }
    }

    const { sends, events } = traffic(SEED)
    const ids = new Map<number, string>()
    const requestOf = new Map<string, number>()
    const o: Outcome = {
      mode,
      legit: { sends: 0, accepted: 0, refused: 0, approved: 0 },
      attack: { sends: 0, charged: 0, refused: 0 },
      decisions: new Map(),
      refusedByRule: {},
      blocks: [],
      ms: 0,
    }
    for (const e of events) {
      clock.set(e.at)
      const s = sends[e.send]!
      if (e.kind === 'verify') {
        const id = ids.get(e.send)
        if (id === undefined) continue // its send was refused: the user never got a code
        const v = await call('/api/v1/verify', { verification_id: id, code: delivery.codes.get(id) })
        if (v.json.verified === true) o.legit.approved++
        continue
      }
      const r = await call('/api/v1/send', { channel: 'sms', recipient: s.recipient, ip: s.ip })
      requestOf.set(r.json.request_id, e.send)
      const side = s.legit ? o.legit : o.attack
      side.sends++
      if (r.status === 200) {
        ids.set(e.send, r.json.verification_id)
        if (s.legit) o.legit.accepted++
        else o.attack.charged++
      } else {
        side.refused++
      }
    }
    // The guard's one log line per (would-be) refusal names the request and the rule.
    for (const line of logger.lines) {
      if (!line.includes('by the fraud guard')) continue
      const rec = JSON.parse(line) as { request_id: string; rule: string }
      const send = requestOf.get(rec.request_id)
      if (send === undefined) continue
      o.decisions.set(send, rec.rule)
      o.refusedByRule[rec.rule] = (o.refusedByRule[rec.rule] ?? 0) + 1
    }
    const day = await server.fraud.status()
    o.blocks = day.countries.map((c) => `${c.country} ${c.sends} sends, ${c.approved} approved`)
    o.ms = Math.round(performance.now() - began)
    return o
  } finally {
    server.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

const enforce = await run('enforce')
const monitor = await run('monitor')

const sameDecisions = enforce.decisions.size === monitor.decisions.size && [...enforce.decisions].every(([send, rule]) => monitor.decisions.get(send) === rule)
const maxCharged = Math.round(60 * Math.max(SCALE, 1))
const checks = [
  { name: `enforce: at most ${maxCharged} attack sends charged`, ok: enforce.attack.charged <= maxCharged },
  { name: 'enforce: no legitimate send refused', ok: enforce.legit.refused === 0 },
  { name: 'monitor: nothing refused', ok: monitor.legit.refused === 0 && monitor.attack.refused === 0 },
  { name: 'monitor: the same decisions as enforce (same sends, same rules)', ok: sameDecisions },
]

const summary = (o: Outcome) => ({
  mode: o.mode,
  legit: o.legit,
  attack: o.attack,
  refusals_by_rule: o.refusedByRule,
  last_24h_by_country: o.blocks,
  ms: o.ms,
})
if (args.json) {
  process.stdout.write(JSON.stringify({ scale: SCALE, seed: SEED, enforce: summary(enforce), monitor: summary(monitor), checks }, null, 2) + '\n')
} else {
  const w = (s: string) => process.stdout.write(s + '\n')
  w(`fraud-sim: one simulated day, scale ${SCALE}, seed ${SEED}`)
  for (const o of [enforce, monitor]) {
    w(`\n[${o.mode}] (${(o.ms / 1000).toFixed(1)} s)`)
    w(`  legitimate: ${o.legit.sends} sends, ${o.legit.accepted} accepted, ${o.legit.refused} refused, ${o.legit.approved} approved`)
    w(`  attack:     ${o.attack.sends} sends, ${o.attack.charged} charged, ${o.attack.refused} refused`)
    w(`  ${o.mode === 'monitor' ? 'would-be refusals' : 'refusals'} by rule: ${JSON.stringify(o.refusedByRule)}`)
    w(`  fraud status at the end of the day (last 24 h): ${o.blocks.join('; ')}`)
  }
  w('')
  for (const c of checks) w(`${c.ok ? 'ok  ' : 'FAIL'} ${c.name}`)
}
process.exit(checks.every((c) => c.ok) ? 0 : 1)
