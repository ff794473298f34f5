/**
 * How a recipient is counted (docs/api.md#order-of-checks): an email address
 * lower-cased, without its `+tag`, and for gmail.com and googlemail.com
 * without the dots of its local part and under one domain; a phone number by
 * its E.164 form. The per-recipient limits and the failure cap key on that
 * identity; the code goes to the address as written, and only the mask of
 * the address as written is ever shown or stored. The five test recipients
 * are exact addresses (docs/api.md#test-recipients).
 */
import { describe, expect, test } from 'bun:test'
import { maskRecipient } from '../../src/lib/mask.ts'
import { recipientIdentity } from '../../src/otp/recipient-identity.ts'
import { databaseBytes, DAY, harnessPerTest, TEST, type Harness } from '../kit/harness.ts'

const start = harnessPerTest({ credits: 100 })
const balance = async (h: Harness) => (await h.server.admin.balance()).balance
const perMinute = (s: number) => `Rate limit exceeded: Maximum 2 verification codes per minute. Please try again in ${s} seconds.`

describe('the counting identity', () => {
  // Titles name the rule, not the address: CI's output scan refuses an address in clear.
  test.each([
    ['as written', 'ann@example.com', 'ann@example.com'],
    ['lower-cased', 'Ann@Example.COM', 'ann@example.com'],
    ['without its +tag', 'ann+promo@example.com', 'ann@example.com'],
    ['without everything from the first +', 'ann+a+b@example.com', 'ann@example.com'],
    ['with its dots outside gmail.com and googlemail.com', 'ann.lee+x@example.com', 'ann.lee@example.com'],
    ['with an empty local part when it starts with +', '+only@example.com', '@example.com'],
    ['without the dots of a gmail.com local part', 'John.Doe@gmail.com', 'johndoe@gmail.com'],
    ['googlemail.com as gmail.com, without dots or tag', 'j.o.h.n.d.o.e+news@GoogleMail.com', 'johndoe@gmail.com'],
    ['with its dots for a domain that only starts with gmail.com', 'john.doe@gmail.com.au', 'john.doe@gmail.com.au'],
    ['with its dots for a subdomain of gmail.com', 'john.doe@mail.gmail.com', 'john.doe@mail.gmail.com'],
    ['with its dots for googlemail.co.uk', 'john.doe+x@googlemail.co.uk', 'john.doe@googlemail.co.uk'],
  ])('an address counts %s', (_, written, counted) => {
    expect(recipientIdentity('email', written)).toBe(counted)
  })

  test('a phone number counts as written (E.164), on sms and voice', () => {
    expect(recipientIdentity('sms', '+14155550123')).toBe('+14155550123')
    expect(recipientIdentity('voice', '+14155550123')).toBe('+14155550123')
  })
})

describe('per-recipient limits', () => {
  test.each([
    ['letter case', ['Ann@Example.com', 'ann@example.com', 'ANN@EXAMPLE.COM']],
    ['a +tag', ['ann+one@example.com', 'ann@example.com', 'ann+two@example.com']],
    ['the dots of gmail.com', ['john.doe@gmail.com', 'johndoe@gmail.com', 'j.ohn.do.e@gmail.com']],
    ['googlemail.com for gmail.com', ['johndoe@googlemail.com', 'John.Doe+otp@gmail.com', 'JOHNDOE@GOOGLEMAIL.COM']],
    ["the review's attack (a +tag, a dot, googlemail.com)", ['victim+1@gmail.com', 'v.ictim@gmail.com', 'victim@googlemail.com']],
  ])('%s: three spellings share one budget; each code goes to the address as written', async (_, spellings) => {
    const h = await start()
    for (const recipient of spellings.slice(0, 2)) expect((await h.send({ channel: 'email', recipient })).status).toBe(200)
    const third = await h.send({ channel: 'email', recipient: spellings[2] })
    expect(third.status).toBe(429)
    expect(third.json.error).toBe(perMinute(60))
    expect(third.headers.get('retry-after')).toBe('60')
    expect(h.delivery.sent.map((m) => m.recipient)).toEqual(spellings.slice(0, 2))
    expect(await balance(h)).toBe(98)
  })

  test.each([
    ['dots outside gmail.com', ['john.doe@example.com', 'johndoe@example.com', 'jo.hn.doe@example.com']],
    ['another domain', ['ann@example.com', 'ann@example.org', 'ann@gmail.com.au']],
    ['a gmail subdomain', ['john.doe@gmail.com', 'john.doe@mail.gmail.com', 'john.doe@googlemail.co.uk']],
  ])('%s: separate recipients, each with its own budget', async (_, spellings) => {
    const h = await start()
    for (const recipient of spellings) {
      for (let i = 0; i < 2; i++) expect((await h.send({ channel: 'email', recipient })).status).toBe(200)
    }
    expect(h.delivery.sent).toHaveLength(6)
  })
})

describe('the failure cap', () => {
  test('wrong codes for one spelling lock the verifications of another, and send to a third refuses', async () => {
    const h = await start({ config: { limits: { recipient_failures_per_day: 3, max_failed_attempts: 100 } } })
    const a = await h.send({ channel: 'email', recipient: 'Jane.Roe@gmail.com', code: '424242' })
    const b = await h.send({ channel: 'email', recipient: 'janeroe+login@googlemail.com', code: '535353' })
    for (let i = 0; i < 3; i++) expect((await h.verify({ verification_id: a.json.verification_id, code: '000000' })).json.message).toBe('Invalid code')
    const locked = await h.verify({ verification_id: b.json.verification_id, code: '535353' })
    expect(locked.status).toBe(429)
    expect(locked.json.retry_after).toBe(DAY / 1000)
    const refused = await h.send({ channel: 'email', recipient: 'j.a.n.e.r.o.e@gmail.com' })
    expect(refused.status).toBe(429)
    expect(refused.json.error).toBe(`Rate limit exceeded: too many failed attempts for this recipient. Please try again in ${DAY / 1000} seconds.`)
    // Another address is not held.
    expect((await h.send({ channel: 'email', recipient: 'jane.roe@example.com' })).status).toBe(200)
  })
})

describe('what is shown and stored', () => {
  test('the mask is of the address as written (status, stored row), and the counting identity is nowhere in the database', async () => {
    const h = await start()
    const written = 'John.Doe+promo@GoogleMail.com'
    const sent = await h.send({ channel: 'email', recipient: written })
    expect(sent.status).toBe(200)
    expect(h.delivery.sent[0]!.recipient).toBe(written)
    const status = await h.call(`/api/v1/verifications/${sent.json.verification_id}`, undefined, { method: 'GET' })
    expect(status.json.recipient).toBe('J************o@GoogleMail.com')
    expect(status.json.recipient).toBe(maskRecipient(written))
    const rows = await h.sql('SELECT recipient_mask FROM verifications')
    expect(rows.map((r) => r.recipient_mask)).toEqual([maskRecipient(written)])
    for (const { name, bytes } of databaseBytes(h)) {
      expect(bytes.includes('johndoe@gmail.com'), name).toBe(false)
      expect(bytes.includes('j*****e@gmail.com'), name).toBe(false)
    }
  })
})

describe('test recipients are exact addresses', () => {
  test('in any letter case they are test recipients: the fixed test code, no credit, no delivery', async () => {
    const h = await start()
    for (const recipient of ['SUCCESS@otpd.test', 'Success@OTPD.TEST']) {
      const r = await h.send({ channel: 'email', recipient })
      expect(r.status).toBe(200)
      expect((await h.verify({ verification_id: r.json.verification_id, code: '123456' })).json.verified).toBe(true)
    }
    const fail = await h.send({ channel: 'email', recipient: 'FAIL@otpd.test' })
    expect((await h.verify({ verification_id: fail.json.verification_id, code: '123456' })).json.message).toBe('Invalid code')
    expect(await balance(h)).toBe(100)
    expect(h.delivery.sent).toHaveLength(0)
  })

  test('with a +tag they are ordinary recipients: charged and delivered as written, with a code of their own', async () => {
    const h = await start()
    for (const recipient of ['success+ci@otpd.test', 'fail+ci@otpd.test']) {
      const r = await h.send({ channel: 'email', recipient, code: '424242' })
      expect(r.status).toBe(200)
      expect(h.delivery.sent.at(-1)!.recipient).toBe(recipient)
      expect((await h.verify({ verification_id: r.json.verification_id, code: '424242' })).json.verified).toBe(true)
    }
    expect(await balance(h)).toBe(98)
  })

  test('the test recipients skip the per-recipient limits even when an ordinary address counted as the same recipient is at them', async () => {
    const h = await start()
    for (let i = 0; i < 2; i++) expect((await h.send({ channel: 'email', recipient: 'success+ci@otpd.test' })).status).toBe(200)
    expect((await h.send({ channel: 'email', recipient: 'success+other@otpd.test' })).json.error).toBe(perMinute(60))
    for (let i = 0; i < 3; i++) expect((await h.send({ channel: 'email', recipient: TEST.EMAIL_SUCCESS })).status).toBe(200)
  })
})
