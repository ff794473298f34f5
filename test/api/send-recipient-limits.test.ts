/**
 * Per-recipient send limits (docs/api.md#limits): rolling
 * windows of a minute, an hour and 24 hours, counted per account and recipient
 * across channels, driven by the manual clock.
 */
import { expect, test } from 'bun:test'
import { DAY, harnessPerTest, HOUR, MINUTE, type Result } from '../kit/harness.ts'

const start = harnessPerTest()

const PHONE = '+14155550123'
const SECOND = 1000

/** Asserts the full 429 answer: body, retry_after and the Retry-After header. */
function expectLimited(r: Result, max: number, period: string, seconds: number) {
  expect(r.status).toBe(429)
  expect(r.json).toEqual({
    error: `Rate limit exceeded: Maximum ${max} verification codes per ${period}. Please try again in ${seconds} seconds.`,
    request_id: r.headers.get('x-request-id')!,
    retry_after: seconds,
  })
  expect(r.headers.get('retry-after')).toBe(String(seconds))
}

test('2 per minute: the 3rd gets 429 with the seconds until the oldest leaves the window', async () => {
  const h = await start({ credits: 10 })
  const sms = { channel: 'sms', recipient: PHONE }
  expect((await h.send(sms)).status).toBe(200) // t = 0
  h.clock.advance(10 * SECOND)
  expect((await h.send(sms)).status).toBe(200) // t = 10 s
  h.clock.advance(10 * SECOND)
  expectLimited(await h.send(sms), 2, 'minute', 40) // t = 20 s
  expect((await h.server.admin.balance()).balance).toBe(8) // a 429 costs nothing
  expect(h.delivery.sent).toHaveLength(2)
})

test('the minute window is rolling: limited at 59.999 s, room for one at exactly 60 s', async () => {
  const h = await start({ credits: 10 })
  const sms = { channel: 'sms', recipient: PHONE }
  await h.send(sms) // t = 0
  h.clock.advance(30 * SECOND)
  await h.send(sms) // t = 30 s
  h.clock.advance(29_999)
  expectLimited(await h.send(sms), 2, 'minute', 1) // t = 59.999 s: 1 ms left, rounded up
  h.clock.advance(1)
  expect((await h.send(sms)).status).toBe(200) // t = 60 s: the first send has left
  expectLimited(await h.send(sms), 2, 'minute', 30) // the 30 s and 60 s sends fill it again
})

test('15 per hour: the 16th is named by period "hour"', async () => {
  const h = await start({ credits: 20 })
  const sms = { channel: 'sms', recipient: PHONE }
  for (let i = 0; i < 15; i++) {
    expect((await h.send(sms)).status).toBe(200) // t = 0, 1, ..., 14 min
    h.clock.advance(MINUTE)
  }
  // t = 15 min: the minute window holds one send, the hour window 15.
  expectLimited(await h.send(sms), 15, 'hour', 45 * 60)
  h.clock.advance(45 * MINUTE - 1)
  expectLimited(await h.send(sms), 15, 'hour', 1)
  h.clock.advance(1)
  expect((await h.send(sms)).status).toBe(200)
})

test('50 per 24 hours: the 51st is named by period "24 hours"', async () => {
  const h = await start({ credits: 60 })
  const sms = { channel: 'sms', recipient: PHONE }
  for (let i = 0; i < 50; i++) {
    expect((await h.send(sms)).status).toBe(200) // every 5 min: 12 per hour
    h.clock.advance(5 * MINUTE)
  }
  // t = 250 min: 11 sends in the last hour, 50 in the last 24 hours.
  expectLimited(await h.send(sms), 50, '24 hours', DAY / SECOND - 250 * 60)
  h.clock.advance(DAY - 250 * MINUTE)
  expect((await h.send(sms)).status).toBe(200) // the send at t = 0 has left
})

test('several windows full: the hour (longer wait) is named, not the minute', async () => {
  const h = await start({ credits: 20 })
  const sms = { channel: 'sms', recipient: PHONE }
  for (let i = 0; i < 14; i++) {
    await h.send(sms) // t = 0 .. 13 min
    h.clock.advance(MINUTE)
  }
  h.clock.advance(-MINUTE + 10 * SECOND)
  expect((await h.send(sms)).status).toBe(200) // 15th, at 13 min 10 s: minute and hour both full
  h.clock.advance(10 * SECOND) // 13 min 20 s: minute wait 40 s, hour wait 2800 s
  expectLimited(await h.send(sms), 15, 'hour', 3600 - (13 * 60 + 20))
})

test('several windows full: the minute is named when its wait is the longer one', async () => {
  const h = await start({ credits: 10, config: { limits: { recipient_per_minute: 2, recipient_per_hour: 3 } } })
  const sms = { channel: 'sms', recipient: PHONE }
  await h.send(sms) // t = 0
  h.clock.advance(59 * MINUTE + 30 * SECOND)
  await h.send(sms) // 59:30
  h.clock.advance(10 * SECOND)
  await h.send(sms) // 59:40
  h.clock.advance(10 * SECOND) // 59:50: hour wait 10 s, minute wait 40 s
  expectLimited(await h.send(sms), 2, 'minute', 40)
  h.clock.advance(10 * SECOND) // 60:00: the hour has room, the minute still not
  expectLimited(await h.send(sms), 2, 'minute', 30)
})

test('limits are configurable: recipient_per_minute = 5', async () => {
  const h = await start({ credits: 10, config: { limits: { recipient_per_minute: 5 } } })
  const sms = { channel: 'sms', recipient: PHONE }
  for (let i = 0; i < 5; i++) expect((await h.send(sms)).status).toBe(200)
  expectLimited(await h.send(sms), 5, 'minute', 60)
})

test('counted across channels: sms then voice to the same number share the count', async () => {
  const h = await start({ credits: 10 })
  expect((await h.send({ channel: 'sms', recipient: PHONE })).status).toBe(200)
  expect((await h.send({ channel: 'voice', recipient: PHONE })).status).toBe(200)
  expectLimited(await h.send({ channel: 'sms', recipient: PHONE }), 2, 'minute', 60)
  expectLimited(await h.send({ channel: 'voice', recipient: PHONE }), 2, 'minute', 60)
})

test('another recipient has its own count', async () => {
  const h = await start({ credits: 10 })
  await h.send({ channel: 'sms', recipient: PHONE })
  await h.send({ channel: 'sms', recipient: PHONE })
  expect((await h.send({ channel: 'sms', recipient: '+14155550124' })).status).toBe(200)
  expect((await h.send({ channel: 'email', recipient: 'ada@example.com' })).status).toBe(200)
})

test('counted per account: two keys of one account share the count', async () => {
  const h = await start({ credits: 10 })
  const second = (await h.server.admin.createKey({ name: 'second' })).key
  await h.send({ channel: 'sms', recipient: PHONE })
  await h.send({ channel: 'sms', recipient: PHONE }, second)
  expectLimited(await h.send({ channel: 'sms', recipient: PHONE }, second), 2, 'minute', 60)
})

test('separate per account: another account sends to the same number', async () => {
  const h = await start({ credits: 10 })
  await h.server.admin.createAccount('acme')
  const acme = (await h.server.admin.createKey({ name: 'acme', account: 'acme' })).key
  await h.server.admin.addCredits(5, 'acme')
  await h.send({ channel: 'sms', recipient: PHONE })
  await h.send({ channel: 'sms', recipient: PHONE })
  expectLimited(await h.send({ channel: 'sms', recipient: PHONE }), 2, 'minute', 60)
  expect((await h.send({ channel: 'sms', recipient: PHONE }, acme)).status).toBe(200)
  expect((await h.send({ channel: 'sms', recipient: PHONE }, acme)).status).toBe(200)
  expectLimited(await h.send({ channel: 'sms', recipient: PHONE }, acme), 2, 'minute', 60)
  expect((await h.server.admin.balance('acme')).balance).toBe(3)
  expect((await h.server.admin.balance()).balance).toBe(8)
})

test('email addresses that differ only in case share the count', async () => {
  const h = await start({ credits: 10 })
  expect((await h.send({ channel: 'email', recipient: 'Ada@Example.com' })).status).toBe(200)
  expect((await h.send({ channel: 'email', recipient: 'ada@example.com' })).status).toBe(200)
  expectLimited(await h.send({ channel: 'email', recipient: 'ADA@EXAMPLE.COM' }), 2, 'minute', 60)
  // The delivery still goes to the address as written.
  expect(h.delivery.sent.map((m) => m.recipient)).toEqual(['Ada@Example.com', 'ada@example.com'])
})

test('only successful sends count: a 429 does not extend the window', async () => {
  const h = await start({ credits: 10 })
  const sms = { channel: 'sms', recipient: PHONE }
  await h.send(sms)
  await h.send(sms)
  for (let i = 0; i < 5; i++) {
    h.clock.advance(10 * SECOND)
    expect((await h.send(sms)).status).toBe(429)
  }
  h.clock.advance(10 * SECOND) // t = 60 s
  expect((await h.send(sms)).status).toBe(200)
})

test('limits survive a restart', async () => {
  const h = await start({ credits: 10 })
  await h.send({ channel: 'sms', recipient: PHONE })
  h.clock.advance(15 * SECOND)
  await h.send({ channel: 'sms', recipient: PHONE })
  const again = await h.restart()
  expectLimited(await again.send({ channel: 'sms', recipient: PHONE }, h.key), 2, 'minute', 45)
  again.clock.advance(45 * SECOND)
  expect((await again.send({ channel: 'sms', recipient: PHONE }, h.key)).status).toBe(200)
})

test('the hour window survives a restart too', async () => {
  const h = await start({ credits: 20, config: { limits: { recipient_per_hour: 3 } } })
  for (let i = 0; i < 3; i++) {
    await h.send({ channel: 'sms', recipient: PHONE })
    h.clock.advance(10 * MINUTE)
  }
  const again = await h.restart()
  expectLimited(await again.send({ channel: 'sms', recipient: PHONE }), 3, 'hour', (HOUR - 30 * MINUTE) / SECOND)
})
