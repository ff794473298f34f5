/**
 * Idempotency keys meet the fraud guard (docs/api.md#idempotency-keys,
 * docs/api.md#fraud-guard): a guard 429 is stored and replayed verbatim,
 * running nothing again (no second send.blocked); the geo 403 is not stored.
 */
import { expect, test } from 'bun:test'
import { deliverEvents } from '../kit/events.ts'
import { blockedEvents, guardedWithReceiverPerTest, PUMPING, uz } from '../kit/fraud.ts'
import { HOUR } from '../kit/harness.ts'

const withReceiver = guardedWithReceiverPerTest()

test('Idempotency-Key: a guard 429 is stored and replayed verbatim (Retry-After too) once rule 3 has room again, running nothing again; the geo 403 is not stored', async () => {
  const { h, rx } = await withReceiver({ new_country_per_hour: 1 })
  const post = (body: Record<string, unknown>, key: string) => h.call('/api/v1/send', body, { headers: { 'idempotency-key': key } })
  expect((await post({ channel: 'sms', recipient: uz(1) }, 'a')).status).toBe(200)
  const first = await post({ channel: 'sms', recipient: uz(2) }, 'b')
  expect(first.status).toBe(429)
  expect(first.json.error).toBe(PUMPING(3600))
  h.clock.advance(2 * HOUR) // rule 3 has room again
  const replay = await post({ channel: 'sms', recipient: uz(2) }, 'b')
  expect(replay.status).toBe(429)
  expect(replay.json).toEqual(first.json)
  expect(replay.headers.get('retry-after')).toBe('3600')
  expect(replay.headers.get('idempotent-replayed')).toBe('true')
  expect(replay.headers.get('x-request-id')).toBe(first.json.request_id)
  expect(h.delivery.sent).toHaveLength(1)
  await deliverEvents(h)
  expect(blockedEvents(rx)).toHaveLength(1) // the replay emitted no second send.blocked
  // Rule 5's 429 likewise.
  await h.server.fraud.setAccount('default', { dailyCreditLimit: 1 })
  const capped = await post({ channel: 'email', recipient: 'a@example.com' }, 'c')
  expect(capped.json.error).toStartWith('Daily credit limit of 1 reached')
  await h.server.fraud.setAccount('default', { dailyCreditLimit: null })
  expect((await post({ channel: 'email', recipient: 'a@example.com' }, 'c')).json).toEqual(capped.json)
  expect(h.delivery.sent).toHaveLength(1)

  // The geo 403 is not stored (docs/api.md#idempotency-keys lists 403 among the answers not stored): allow the country, retry, it sends.
  await h.server.fraud.setAccount('default', { allowedCountries: ['US'] })
  const geo = await post({ channel: 'sms', recipient: uz(3) }, 'd')
  expect(geo.status).toBe(403)
  expect(geo.headers.get('idempotent-replayed')).toBeNull()
  await h.server.fraud.setAccount('default', { allowedCountries: null })
  const retried = await post({ channel: 'sms', recipient: uz(3) }, 'd')
  expect(retried.status).toBe(200)
  expect(retried.headers.get('idempotent-replayed')).toBeNull()
  expect(h.delivery.sent).toHaveLength(2)
  // ...and that 200 is the one stored.
  const again = await post({ channel: 'sms', recipient: uz(3) }, 'd')
  expect(again.headers.get('idempotent-replayed')).toBe('true')
  expect(again.json).toEqual(retried.json)
})
