/**
 * send.blocked (docs/api.md#fraud-guard, docs/api.md#events): a refusal by the
 * guard emits it in its own transaction, with the verification and status
 * null and the rule, country and prefix (masked as the recipient is: together
 * they show no more digits than the mask); through the real outbox, its exact
 * body; monitor refuses nothing, so it emits none.
 */
import { expect, test } from 'bun:test'
import { resolveConfig } from '../../src/app/load-config.ts'
import { deliverEvents } from '../kit/events.ts'
import { blockedEvents, guardedPerTest, guardedWithReceiverPerTest, refusals, uz, uzEvidence } from '../kit/fraud.ts'
import { sameDatabase } from '../kit/same-database.ts'
import { watchEvents } from '../kit/watch-events.ts'

const signedIn = guardedPerTest()
const withReceiver = guardedWithReceiverPerTest()

test('a refusal emits send.blocked (verification and status null; rule, country, prefix) in its transaction; monitor emits none', async () => {
  const h = await signedIn({ allowed_countries: ['US'] })
  // The events handed to the outbox are watched (test/kit/watch-events.ts); the real outbox: the tests below.
  // Only send.blocked: the sends let through write their verification.sent in the same outbox.
  const events = watchEvents(h, (e) => e.type === 'send.blocked')
  expect((await h.send({ channel: 'sms', recipient: uz(1) })).status).toBe(403)
  expect(events).toEqual([
    {
      type: 'send.blocked',
      accountId: 1,
      at: h.clock.now(),
      verification: null,
      status: null,
      extra: { rule: 'geo', country: 'UZ', prefix: '+9989****', channel: 'sms', recipient: '+9989*****001' },
      // Kept beside the event only, for the console's search by full number (docs/console.md#verifications).
      recipientHash: expect.any(Uint8Array),
    },
  ])
  await h.server.fraud.setAccount('default', { dailyCreditLimit: 1 })
  expect((await h.send({ channel: 'email', recipient: 'a@example.com' })).status).toBe(200)
  expect((await h.send({ channel: 'email', recipient: 'b@example.com' })).status).toBe(429)
  expect(events[1]!.extra).toEqual({ rule: 'daily_credit', country: null, prefix: null, channel: 'email', recipient: '*@example.com' })
  h.server.reload(resolveConfig({ ...sameDatabase(h), fraud: { mode: 'monitor', allowed_countries: ['US'] } }))
  await h.server.fraud.setAccount('default', { dailyCreditLimit: null })
  expect((await h.send({ channel: 'sms', recipient: uz(2) })).status).toBe(200)
  expect(events).toHaveLength(2)
})

test('send.blocked through the real outbox: a rule-1 refusal in enforce mode, and a rule-4 one; the exact body', async () => {
  const { h, rx } = await withReceiver({ allowed_countries: ['US', 'UZ'] })
  await h.server.fraud.setAccount('default', { allowedCountries: ['US'] })
  expect((await h.send({ channel: 'voice', recipient: uz(1) })).status).toBe(403)
  await deliverEvents(h)
  const geo = blockedEvents(rx)[0]!
  expect(geo).toEqual({
    id: geo.id,
    type: 'send.blocked',
    occurred_at: new Date(h.clock.now()).toISOString(),
    account: 'default',
    data: {
      verification_id: null,
      channel: 'voice',
      recipient: '+9989*****001',
      status: null,
      sequence: 0,
      test: false,
      rule: 'geo',
      country: 'UZ',
      prefix: '+9989****',
    },
  })
  await h.server.fraud.setAccount('default', { allowedCountries: null })
  await uzEvidence(h)
  expect((await h.send({ channel: 'sms', recipient: uz(2) })).status).toBe(429)
  await deliverEvents(h)
  expect(blockedEvents(rx)).toHaveLength(2)
  expect(blockedEvents(rx)[1]!.data).toEqual({
    verification_id: null,
    channel: 'sms',
    recipient: '+9989*****002',
    status: null,
    sequence: 0,
    test: false,
    rule: 'conversion',
    country: 'UZ',
    prefix: '+9989****',
  })
})

test('monitor refuses nothing and so emits no send.blocked: the send is a verification like any other (verification.sent)', async () => {
  const { h, rx } = await withReceiver({ mode: 'monitor', allowed_countries: ['US'] })
  const sent = await h.send({ channel: 'sms', recipient: uz(1) })
  expect(sent.status).toBe(200)
  expect(await refusals(h, { rule: 'geo', country: 'UZ', decision: 'would_refuse' })).toBe(1)
  await deliverEvents(h)
  expect(rx.received.map((r) => [r.json.type, r.json.data.verification_id])).toEqual([['verification.sent', sent.json.verification_id]])
})
