/**
 * Sends give way to the rest of the event loop only while a wave of them
 * waits on providers (otp/send.ts giveWay, docs/benchmarks.md#slow-providers):
 * when GIVE_WAY_FROM or more are answered at once, one turn of the loop
 * answers a few and the rest come in later turns; a smaller group is
 * answered in the turn it ends, as before.
 */
import { expect, test } from 'bun:test'
import { GIVE_WAY_FROM } from '../../src/otp/send.ts'
import type { OutboundMessage } from '../../src/otp/types.ts'
import { harnessPerTest, RecordingDelivery } from '../kit/harness.ts'

const start = harnessPerTest({ credits: 1000, config: { limits: { key_requests_per_minute: 100_000, recipient_per_minute: 100 } } })

/** Counts the sends that reached it, held or not. */
class CountingDelivery extends RecordingDelivery {
  entered = 0
  override deliver(message: OutboundMessage): Promise<{ provider: string }> {
    this.entered++
    return super.deliver(message)
  }
}

/**
 * `n` sends held by the provider, then let go at once; how many were answered
 * by the next turn of the event loop. `ceiling`: `delivery.max_sends_in_flight`
 * is `n`, and one more send is refused at it before the provider answers.
 */
async function answeredInTheTurnTheyEnd(n: number, ceiling = false): Promise<{ early: number; all: number[] }> {
  const delivery = new CountingDelivery()
  const h = await start({
    delivery,
    config: { limits: { key_requests_per_minute: 100_000, recipient_per_minute: 100 }, ...(ceiling ? { delivery: { max_sends_in_flight: n } } : {}) },
  })
  let release!: () => void
  h.delivery.gate = new Promise<void>((r) => (release = r))
  let answered = 0
  const sends = Array.from({ length: n }, (_, i) =>
    h.send({ channel: 'sms', recipient: `+1415555${String(1000 + i).padStart(4, '0')}` }).then((r) => {
      answered++
      return r.status
    }),
  )
  for (let i = 0; i < 400 && delivery.entered < n; i++) await new Promise((r) => setTimeout(r, 5))
  expect(delivery.entered).toBe(n)
  if (ceiling) expect((await h.send({ channel: 'sms', recipient: '+14155559999' })).status).toBe(503)
  release()
  const early = await new Promise<number>((resolve) => setImmediate(() => resolve(answered)))
  return { early, all: await Promise.all(sends) }
}

test('a wave of GIVE_WAY_FROM sends answered by their provider at once is answered over several turns', async () => {
  const { early, all } = await answeredInTheTurnTheyEnd(GIVE_WAY_FROM + 10)
  expect(all.every((s) => s === 200)).toBe(true)
  expect(early).toBeLessThan(GIVE_WAY_FROM / 2)
})

test('at the ceiling the sends do not give way: every send that ends frees a slot for the refused ones', async () => {
  const { early, all } = await answeredInTheTurnTheyEnd(GIVE_WAY_FROM + 10, true)
  expect(all.every((s) => s === 200)).toBe(true)
  expect(early).toBe(GIVE_WAY_FROM + 10)
})

test('fewer sends than GIVE_WAY_FROM are all answered in the turn they end', async () => {
  const { early, all } = await answeredInTheTurnTheyEnd(GIVE_WAY_FROM / 2)
  expect(all.every((s) => s === 200)).toBe(true)
  expect(early).toBe(GIVE_WAY_FROM / 2)
})
