/**
 * The console's overview (docs/console.md#overview): its figures are what was
 * sent, delivered, failed and verified through the API, by channel, country
 * and provider, once the rollup has run; a period holds its whole buckets.
 */
import { expect, test } from 'bun:test'
import { DAY, harnessPerTest, HOUR, MINUTE, TEST } from '../kit/harness.ts'
import { consoleOf, NUMBERS } from '../kit/console.ts'

const start = harnessPerTest({ credits: 100 })

test('the overview counts exactly the sends, failed deliveries and approvals made through the API', async () => {
  const h = await start()
  const c = consoleOf(h)
  const ids: string[] = []
  const codes: string[] = []
  const send = async (recipient: string) => {
    const r = await h.send({ channel: 'sms', recipient })
    expect(r.status).toBe(200)
    ids.push(r.json.verification_id)
    codes.push(h.delivery.lastCode())
  }
  for (let i = 0; i < 3; i++) await send(NUMBERS.US(i))
  for (let i = 0; i < 2; i++) await send(NUMBERS.GB(i))
  expect((await h.send({ channel: 'email', recipient: 'ops@example.com' })).status).toBe(200)
  // One failed delivery (refunded), to Germany.
  h.delivery.fail = true
  expect((await h.send({ channel: 'sms', recipient: NUMBERS.DE(0) })).status).toBe(500)
  h.delivery.fail = false
  // Two approvals (a US and a GB send), one wrong code, and a test recipient, which counts for nothing.
  expect((await h.verify({ verification_id: ids[0], code: codes[0] })).status).toBe(200)
  expect((await h.verify({ verification_id: ids[3], code: codes[3] })).status).toBe(200)
  const wrong = await h.verify({ verification_id: ids[1], code: codes[1] === '000000' ? '111111' : '000000' })
  expect(wrong.json.verified).toBe(false)
  expect((await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })).status).toBe(200)

  const r = await c.get('/console/api/overview?period=24h')
  expect(r.status).toBe(200)
  expect(r.json.totals).toEqual({ sends: 7, accepted: 6, delivered: 0, undelivered: 0, failed: 1, approved: 2, checked: 0, conversion: 2 / 7 })
  expect(r.json.by_channel.map((x: any) => [x.channel, x.sends, x.approved, x.failed])).toEqual([
    ['sms', 6, 2, 1],
    ['email', 1, 0, 0],
  ])
  expect(r.json.by_country.map((x: any) => [x.country, x.sends, x.approved, x.conversion])).toEqual([
    ['US', 3, 1, 1 / 3],
    ['GB', 2, 1, 0.5],
    ['DE', 1, 0, 0],
  ])
  expect(r.json.providers).toEqual([
    { provider: 'recording', channel: 'sms', accepted: 5, delivered: 0, undelivered: 0, delivery_rate: 0, failover: false },
    { provider: 'recording', channel: 'email', accepted: 1, delivered: 0, undelivered: 0, delivery_rate: 0, failover: false },
  ])
  expect(r.json.failover_share).toBe(0)
  // 100 granted, 7 debited, 1 refunded: 94 left, 6 spent.
  expect(r.json.credits).toEqual({ balance: 94, daily_cap: null, spent: 6, spent_24h: 6 })
  expect(r.json.series).toHaveLength(24)
  expect(r.json.series.reduce((n: number, b: any) => n + b.sends, 0)).toBe(7)
  expect(r.json.series.at(-1)).toEqual({ at: '2026-01-01T12:00:00.000Z', sends: 7, approved: 2 })
  expect(r.json.as_of).toBe(new Date(h.clock.now()).toISOString())

  // Another account sees none of it; an unknown one is a 404.
  await h.server.admin.createAccount('other')
  const other = await c.get('/console/api/overview?period=24h&account=other')
  expect(other.json.totals.sends).toBe(0)
  expect((await c.get('/console/api/overview?account=nobody')).status).toBe(404)
  expect((await c.get('/console/api/overview?account=default')).json.totals.sends).toBe(7)
})

test('a later change (an approval, a delivery receipt) is counted in the hour of its send, once the rollup runs again', async () => {
  const h = await start()
  const c = consoleOf(h)
  const r = await h.send({ channel: 'sms', recipient: NUMBERS.US(1) })
  const code = h.delivery.lastCode()
  expect((await c.get('/console/api/overview?period=1h')).json.totals.approved).toBe(0)
  h.clock.advance(2 * MINUTE)
  expect((await h.verify({ verification_id: r.json.verification_id, code })).status).toBe(200)
  // Not yet rolled up: still 0.
  expect((await c.get('/console/api/overview?period=1h', { rollup: false })).json.totals.approved).toBe(0)
  const after = await c.get('/console/api/overview?period=1h')
  expect(after.json.totals).toMatchObject({ sends: 1, approved: 1, conversion: 1 })
  // The approval stays in the minute of the send.
  expect(after.json.series.filter((b: any) => b.sends > 0)).toEqual([{ at: '2026-01-01T12:00:00.000Z', sends: 1, approved: 1 }])
})

test('period boundaries: a send belongs to a period while its bucket is one of the period’s last buckets', async () => {
  const h = await start()
  const c = consoleOf(h)
  const t0 = h.clock.now() // 12:00:00
  h.clock.advance(30_000)
  expect((await h.send({ channel: 'sms', recipient: NUMBERS.GB(3) })).status).toBe(200)
  const sends = async (period: string) => (await c.get(`/console/api/overview?period=${period}`)).json.totals.sends
  // 1 h: the last 60 minutes, the current one included.
  h.clock.set(t0 + HOUR - 1)
  expect(await sends('1h')).toBe(1)
  h.clock.set(t0 + HOUR)
  expect(await sends('1h')).toBe(0)
  // 24 h: the last 24 hours, the current one included.
  h.clock.set(t0 + DAY - 1)
  expect(await sends('24h')).toBe(1)
  h.clock.set(t0 + DAY)
  expect(await sends('24h')).toBe(0)
  expect(await sends('7d')).toBe(1)
  // 30 d: the last 30 UTC days, today included.
  h.clock.set(Date.UTC(2026, 0, 30, 23, 59, 59))
  expect(await sends('30d')).toBe(1)
  h.clock.set(Date.UTC(2026, 0, 31))
  expect(await sends('30d')).toBe(0)
})

test('bad query strings are 400s naming the parameter', async () => {
  const h = await start()
  const c = consoleOf(h)
  const bad = async (q: string, error: string) => {
    const r = await c.get(`/console/api/overview${q}`, { rollup: false })
    expect(r.status).toBe(400)
    expect(r.json).toEqual({ error, request_id: r.headers.get('x-request-id')! })
  }
  await bad('?period=2h', "query parameter 'period' is not valid: one of 1h, 24h, 7d, 30d")
  await bad('?period=1h&period=24h', "query parameter 'period' is given more than once")
  await bad('?since=1', "unknown query parameter 'since': use period, account")
  await bad('?account=', "query parameter 'account' is not valid: An account name; every account when absent.")
})
