/** Shared pieces of the fraud guard tests (docs/api.md#fraud-guard). */
import { DAY, harnessPerTest, type Harness, type HarnessOptions } from './harness.ts'
import { receiverPerTest, type Receiver } from './webhook-receiver.ts'

/** Uzbekistan mobile numbers in the prefix +99890123 (the example of docs/api.md#fraud-guard). */
export const uz = (i: number) => `+99890123${String(i).padStart(4, '0')}`
/** Another prefix of Uzbekistan: +99893555. */
export const uz2 = (i: number) => `+99893555${String(i).padStart(4, '0')}`
/** US numbers in the prefix +1415555 (San Francisco). */
export const us = (i: number) => `+1415555${String(i).padStart(4, '0')}`
/** Canadian numbers (Ottawa), a country of its own under the shared +1 code. */
export const ca = (i: number) => `+1613555${String(i).padStart(4, '0')}`

/** The default grace period of rule 4 (fraud.conversion_grace_seconds), in ms. */
export const GRACE = 600_000

export const PUMPING = (s: number) => `Sending to this destination is temporarily blocked (suspected SMS pumping). Please try again in ${s} seconds.`

/**
 * The set-up of a fraud test file (harnessPerTest): the returned
 * `signedIn(fraud, opts)` builds a harness with the guard at its defaults
 * (docs/api.md#fraud-guard) plus `fraud` overrides, and plenty of room in every other
 * limit; it is closed when the test ends.
 */
export function guardedPerTest(): (fraud?: Record<string, unknown>, opts?: HarnessOptions) => Promise<Harness> {
  const start = harnessPerTest()
  return (fraud = {}, opts = {}) =>
    start({
      credits: 100_000,
      ...opts,
      config: {
        limits: { key_requests_per_minute: 1_000_000, recipient_per_minute: 1000, recipient_per_hour: 1000, recipient_per_day: 1000 },
        ...(opts.config ?? {}),
        fraud: { mode: 'enforce', ...fraud },
      },
    })
}

/** guardedPerTest, each server with a receiver for its every event (stopped when the test ends). */
export function guardedWithReceiverPerTest(): (fraud?: Record<string, unknown>) => Promise<{ h: Harness; rx: Receiver }> {
  const signedIn = guardedPerTest()
  const receiver = receiverPerTest()
  return async (fraud = {}) => {
    const h = await signedIn(fraud)
    const rx = receiver()
    await h.server.webhooks.add({ url: rx.url })
    return { h, rx }
  }
}

/** The bodies of the send.blocked events a receiver got. */
export const blockedEvents = (rx: Receiver) => rx.received.filter((r) => r.json.type === 'send.blocked').map((r) => r.json)

/** Sends to `recipient` with a known code and verifies it: an approved verification (proves the country, converts the prefix). */
export async function approve(h: Harness, recipient: string, ip?: string): Promise<void> {
  const sent = await h.send({ channel: 'sms', recipient, code: '424242', ...(ip ? { ip } : {}) })
  if (sent.status !== 200) throw new Error(`send to ${recipient} answered ${sent.status}: ${JSON.stringify(sent.json)}`)
  const v = await h.verify({ verification_id: sent.json.verification_id, code: '424242' })
  if (v.json.verified !== true) throw new Error(`verify answered ${JSON.stringify(v.json)}`)
}

/** `n` sends that must be accepted, to `to(from)`, `to(from + 1)`... (without an approval: rule 4 counts them as unconverted). */
export async function sendAccepted(h: Harness, n: number, from = 100, to = uz, extra: Record<string, unknown> = {}): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await h.send({ channel: 'sms', recipient: to(from + i), ...extra })
    if (r.status !== 200) throw new Error(`send ${i} to ${to(from + i)} answered ${r.status}: ${r.json.error}`)
  }
}

/**
 * UZ proven (an approval in another prefix, then a day later: out of rule 4's
 * window) and 20 unapproved sends older than the grace period: the next send
 * to the prefix +99890123 starts a block of the prefix and the country.
 */
export async function uzEvidence(h: Harness): Promise<void> {
  await approve(h, uz2(1))
  h.clock.advance(DAY)
  await sendAccepted(h, 20)
  h.clock.advance(GRACE)
}

/** The value of one otpd_fraud_refusals_total series (0 when absent). */
export async function refusals(h: Harness, labels: { rule: string; country: string; decision: 'refused' | 'would_refuse' }): Promise<number> {
  const text = await h.server.metrics.render()
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`otpd_fraud_refusals_total{rule="${labels.rule}",country="${labels.country}",decision="${labels.decision}"}`))
  return line ? Number(line.split(' ').at(-1)) : 0
}

export async function balance(h: Harness): Promise<number> {
  return (await h.server.admin.balance()).balance
}
