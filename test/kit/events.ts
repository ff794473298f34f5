/** A server's event outbox driven by the test, without its background loop (docs/api.md#events). */
import { expect } from 'bun:test'
import type { Harness } from './harness.ts'

/** Runs the delivery loop's passes until none is due and returns the tries made (the settle of a send is written after its answer: waits for it first). */
export async function deliverEvents(h: Harness): Promise<number> {
  await h.server.storage.settled()
  let n = 0
  for (let tried = await h.server.events.deliverDue(); tried > 0; tried = await h.server.events.deliverDue()) n += tried
  return n
}

/** The types of the events written so far, oldest first, through the operator's API (not SQL); those of one verification when `id` is given. */
export async function eventTypes(h: Harness, id?: string): Promise<string[]> {
  await h.server.storage.settled()
  return (await h.server.webhooks.events({ limit: 1000 })).filter((e) => id === undefined || e.verificationId === id).map((e) => e.type)
}

/** An SMS send that must succeed, with its settle written (its events with it): its verification id. */
export async function sendSettled(h: Harness, recipient: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await h.send({ channel: 'sms', recipient, ...extra })
  expect(r.status).toBe(200)
  await h.server.storage.settled()
  return r.json.verification_id as string
}
