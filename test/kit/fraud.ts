/** Shared pieces of the fraud guard tests (EXTENSIONS.md section 5). */
import { createHarness, type Harness, type HarnessOptions } from './harness.ts'

/** Uzbekistan mobile numbers in the prefix +99890123 (the example of section 5). */
export const uz = (i: number) => `+99890123${String(i).padStart(4, '0')}`
/** US numbers in the prefix +1415555 (San Francisco). */
export const us = (i: number) => `+1415555${String(i).padStart(4, '0')}`
/** Canadian numbers (Ottawa), a country of its own under the shared +1 code. */
export const ca = (i: number) => `+1613555${String(i).padStart(4, '0')}`

export const PUMPING = (s: number) => `Sending to this destination is temporarily blocked (suspected SMS pumping). Please try again in ${s} seconds.`

/** A harness with the guard at its defaults (section 5) plus `fraud` overrides, and plenty of room in every other limit. */
export function guarded(fraud: Record<string, unknown> = {}, opts: HarnessOptions = {}): Promise<Harness> {
  return createHarness({
    credits: 100_000,
    ...opts,
    config: {
      limits: { key_requests_per_minute: 1_000_000, recipient_per_minute: 1000, recipient_per_hour: 1000, recipient_per_day: 1000 },
      ...(opts.config ?? {}),
      fraud: { mode: 'enforce', ...fraud },
    },
  })
}

/** Sends to `recipient` with a known code and verifies it: an approved verification (proves the country, converts the prefix). */
export async function approve(h: Harness, recipient: string, ip?: string): Promise<void> {
  const sent = await h.send({ channel: 'sms', recipient, code: '424242', ...(ip ? { ip } : {}) })
  if (sent.status !== 200) throw new Error(`send to ${recipient} answered ${sent.status}: ${JSON.stringify(sent.json)}`)
  const v = await h.verify({ verification_id: sent.json.verification_id, code: '424242' })
  if (v.json.verified !== true) throw new Error(`verify answered ${JSON.stringify(v.json)}`)
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
