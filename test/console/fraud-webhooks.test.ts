/**
 * The console's fraud guard and webhooks pages (docs/console.md#fraud-guard,
 * docs/console.md#webhooks): blocks with their evidence, refusals and
 * would-be refusals, conversion by country and prefix; endpoints with their
 * secrets masked and recent deliveries with status and attempts.
 */
import { expect, test } from 'bun:test'
import { deliverEvents } from '../kit/events.ts'
import { guardedPerTest, uz, us } from '../kit/fraud.ts'
import { receiverPerTest } from '../kit/webhook-receiver.ts'
import { consoleOf } from '../kit/console.ts'

const signedIn = guardedPerTest()
const receiver = receiverPerTest()

test('fraud: a conversion block with its evidence, a geo refusal, conversion by country and prefix', async () => {
  const h = await signedIn({ allowed_countries: ['US', 'UZ'], new_country_per_hour: 1000, min_sends: 3, min_conversion: 0.5, conversion_grace_seconds: 0 })
  const c = consoleOf(h)
  // Three sends to Uzbekistan, none verified; then the fourth is refused and the scope blocked.
  for (let i = 1; i <= 3; i++) expect((await h.send({ channel: 'sms', recipient: uz(i) })).status).toBe(200)
  h.clock.advance(1000)
  expect((await h.send({ channel: 'sms', recipient: uz(4) })).status).toBe(429)
  // A country not allowed (Germany).
  expect((await h.send({ channel: 'sms', recipient: '+4915112345678' })).status).toBe(403)
  // A US send, verified.
  const ok = await h.send({ channel: 'sms', recipient: us(1) })
  expect((await h.verify({ verification_id: ok.json.verification_id, code: h.delivery.lastCode() })).status).toBe(200)

  const r = await c.get('/console/api/fraud?period=24h')
  expect(r.status).toBe(200)
  expect(r.json.mode).toBe('enforce')
  const country = r.json.blocks.find((b: any) => b.scope.kind === 'country')
  expect(country).toMatchObject({ account: 'default', rule: 'conversion', scope: { kind: 'country', value: 'UZ' }, level: 0 })
  expect(country.evidence).toMatchObject({ sends: 3, approved: 0, conversion: 0 })
  expect(new Date(country.until).getTime()).toBe(h.clock.now() + 15 * 60_000)
  expect(r.json.refusals.map((x: any) => [x.rule, x.country, x.refusals]).sort()).toEqual([
    ['conversion', 'UZ', 1],
    ['geo', 'DE', 1],
  ])
  expect(r.json.countries.map((x: any) => [x.country, x.sends, x.approved])).toEqual([
    ['UZ', 3, 0],
    ['US', 1, 1],
  ])
  // A blocked prefix is named (the block names it); any other range shows only its counting key, never digits past the mask.
  const prefixRows = r.json.prefixes.rows.map((x: any) => [x.prefix, x.sends, x.approved])
  expect(prefixRows[0]).toEqual(['+99890123', 3, 0])
  expect(prefixRows[1][0]).toMatch(/^range #[\w-]{8}$/)
  expect(prefixRows[1].slice(1)).toEqual([1, 1])
  expect(JSON.stringify(r.json)).not.toContain('1415555')
  expect(r.json.monitored).toEqual([])
})

test('fraud: monitor mode shows the sends it let through that a rule would have refused', async () => {
  const h = await signedIn({ mode: 'monitor', allowed_countries: ['US'] })
  expect((await h.send({ channel: 'sms', recipient: uz(1) })).status).toBe(200)
  expect((await h.send({ channel: 'sms', recipient: us(1) })).status).toBe(200)
  const r = await consoleOf(h).get('/console/api/fraud?period=1h')
  expect(r.json.mode).toBe('monitor')
  expect(r.json.monitored).toEqual([{ country: 'UZ', sends: 1 }])
  expect(r.json.refusals).toEqual([])
  const v = await consoleOf(h).get('/console/api/verifications?country=UZ')
  expect(v.json.verifications[0].fraud_monitored).toBe('geo')
})

test('webhooks: endpoints with the secret masked, deliveries newest first with status and attempts', async () => {
  const h = await signedIn({ mode: 'off' })
  const rx = receiver()
  const { secret } = await h.server.webhooks.add({ url: rx.url })
  rx.statuses.push(500)
  const a = await h.send({ channel: 'sms', recipient: us(1) })
  await deliverEvents(h)
  const r = await consoleOf(h).get('/console/api/webhooks?period=24h')
  expect(r.status).toBe(200)
  expect(r.json.endpoints).toHaveLength(1)
  expect(r.json.endpoints[0]).toMatchObject({ account: 'default', url: rx.url, secret: '********' })
  expect(JSON.stringify(r.json)).not.toContain(secret)
  expect(r.json.deliveries).toHaveLength(1)
  expect(r.json.deliveries[0]).toMatchObject({ type: 'verification.sent', status: 'pending', attempts: 1, last_error: expect.any(String) })
  expect(r.json.next).toBeNull()
  expect((await h.verify({ verification_id: a.json.verification_id, code: h.delivery.lastCode() })).status).toBe(200)
  await deliverEvents(h)
  const after = await consoleOf(h).get('/console/api/webhooks?status=delivered')
  expect(after.json.deliveries.map((d: any) => d.type)).toEqual(['verification.approved'])
  const bad = await consoleOf(h).get('/console/api/webhooks?status=gone', { rollup: false })
  expect(bad.status).toBe(400)
})
