/**
 * The delivery loop over a backlog (docs/events.md#how-delivery-works): one
 * pass works through batch after batch until nothing is due, each batch's
 * outcomes recorded in the write that leases the next; outcomes that cannot
 * be recorded leave their leases to run out, and the events are sent again
 * with the same webhook-id.
 */
import { expect, test } from 'bun:test'
import { EventDispatcher, LEASE_MS } from '../../src/events/dispatcher.ts'
import type { Storage } from '../../src/otp/ports/index.ts'
import { sendSettled } from '../kit/events.ts'
import { harnessPerTest, type Harness } from '../kit/harness.ts'
import { receiverPerTest } from '../kit/webhook-receiver.ts'

const start = harnessPerTest({ credits: 100 })
const receiver = receiverPerTest()

/** More than two batches of the loop (32 each). */
const BACKLOG = 70

async function backlog(h: Harness): Promise<void> {
  await h.server.events.scanExpired(true)
  for (let i = 0; i < BACKLOG; i++) await sendSettled(h, `+1415555${String(5000 + i)}`)
}

test('one pass delivers a backlog of several batches, each event once, and records every outcome', async () => {
  const h = await start()
  const rx = receiver()
  await h.server.webhooks.add({ url: rx.url })
  await backlog(h)
  expect(await h.server.events.deliverDue()).toBe(BACKLOG)
  expect(new Set(rx.received.map((r) => r.id)).size).toBe(BACKLOG)
  expect(rx.received).toHaveLength(BACKLOG)
  const events = await h.server.webhooks.events({ limit: 1000 })
  expect(events.map((e) => [e.status, e.attempts])).toEqual(Array.from({ length: BACKLOG }, () => ['delivered', 1]))
  expect(await h.server.events.deliverDue()).toBe(0)
})

test('outcomes that cannot be recorded are sent again once their lease runs out, with the same webhook-id', async () => {
  const h = await start()
  const rx = receiver()
  await h.server.webhooks.add({ url: rx.url })
  await backlog(h)
  // The loop's first write leases the first batch; every write after it fails, as a full disk would.
  let writes = 0
  const failing: Storage = {
    read: (fn) => h.server.storage.read(fn),
    write: (fn) => (++writes === 1 ? h.server.storage.write(fn) : Promise.reject(new Error('disk I/O error'))),
    writeShared: () => Promise.reject(new Error('disk I/O error')),
    onStale: (l) => h.server.storage.onStale(l),
  }
  const logs: { msg: string; fields: Record<string, unknown> }[] = []
  const logger = {
    ...h.server.logger,
    error: (msg: string, fields: Record<string, unknown> = {}) => void logs.push({ msg, fields }),
  }
  const outcomes: string[] = []
  const broken = new EventDispatcher({ storage: failing, clock: h.clock, logger, sealer: h.server.sealer, onOutcome: (o) => outcomes.push(o) })
  expect(await broken.deliverDue()).toBe(32)
  const first = rx.received.map((r) => r.id)
  expect(first).toHaveLength(32)
  expect(outcomes).toEqual([])
  expect(logs.map((l) => l.msg)).toEqual(Array.from({ length: 32 }, () => 'could not record a webhook delivery; it will be sent again'))
  expect(logs.map((l) => l.fields.event).sort()).toEqual([...first].sort())

  // Still leased: the working loop takes the other 38 and leaves those 32 alone.
  expect(await h.server.events.deliverDue()).toBe(BACKLOG - 32)
  expect(rx.received).toHaveLength(BACKLOG)
  // Once the lease runs out, they go again with the same ids, and are recorded.
  h.clock.advance(LEASE_MS)
  expect(await h.server.events.deliverDue()).toBe(32)
  expect(
    rx.received
      .slice(BACKLOG)
      .map((r) => r.id)
      .sort(),
  ).toEqual([...first].sort())
  const events = await h.server.webhooks.events({ limit: 1000 })
  expect(events.every((e) => e.status === 'delivered')).toBe(true)
  expect(new Set(rx.received.map((r) => r.id)).size).toBe(BACKLOG)
})
