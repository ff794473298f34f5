/**
 * The `whatsapp` channel (docs/api.md#send-a-code, docs/delivery.md#whatsapp):
 * what holds for every channel holds for it (phone validation with the SMS
 * texts, credits, test recipients, status), and the fraud guard treats it as
 * its own channel (docs/fraud-guard.md#whatsapp): its own geo list, and rules
 * 2-4 counting its sends apart from sms and voice.
 */
import { describe, expect, test } from 'bun:test'
import { resolveConfig } from '../../src/app/load-config.ts'
import { parseScope } from '../../src/otp/fraud-admin.ts'
import { balance, guardedPerTest, us, uz } from '../kit/fraud.ts'
import { expectError, harnessPerTest, TEST } from '../kit/harness.ts'

const start = harnessPerTest()
const guarded = guardedPerTest()

describe('the channel', () => {
  test('a send costs one credit, hands the provider the channel and the SMS text, and the status says whatsapp', async () => {
    const h = await start({ credits: 5 })
    const r = await h.send({ channel: 'whatsapp', recipient: '+5511987654321', locale: 'pt-BR' })
    expect(r.status).toBe(200)
    const m = h.delivery.sent.at(-1)!
    expect(m).toMatchObject({ channel: 'whatsapp', recipient: '+5511987654321', locale: 'pt-BR' })
    expect(m.text).toContain(m.code)
    const status = await h.call(`/api/v1/verifications/${r.json.verification_id}`, undefined, { method: 'GET', headers: {} })
    expect(status.json).toMatchObject({ channel: 'whatsapp', status: 'pending' })
    expect(status.json.delivery.encoding).toBeUndefined() // SMS only
    const v = await h.verify({ verification_id: r.json.verification_id, code: m.code })
    expect(v.json.verified).toBe(true)
    expect(await balance(h)).toBe(4)
    expect(await h.server.metrics.render()).toContain('otpd_sends_total{channel="whatsapp",provider="recording",outcome="sent"} 1\n')
  })

  // Labelled, not printed: a test name holds no recipient (scripts/ci/scan-output.ts).
  test.each([
    ['without +', '4155550123'],
    ['too short', '+0123'],
    ['an address', 'ann@example.com'],
    ['a number', 12],
  ])('recipient %s: the SMS and voice text', async (_label, recipient) => {
    const h = await start()
    expectError(await h.send({ channel: 'whatsapp', recipient }), 400, 'recipient must be a valid E.164 phone number for SMS and voice channels')
  })

  test('a test number: nothing delivered, no credit, 123456 verifies (every test number: test-recipients.test.ts)', async () => {
    const h = await start({ credits: 0 })
    const r = await h.send({ channel: 'whatsapp', recipient: TEST.PHONE_SUCCESS })
    expect(r.status).toBe(200)
    expect(h.delivery.sent).toHaveLength(0)
    expect((await h.verify({ verification_id: r.json.verification_id, code: '123456' })).json.verified).toBe(true)
  })

  test('[channels] whatsapp takes a list of providers, and an sms-only type is refused there', () => {
    expect(resolveConfig({ providers: { dev: { type: 'log' } }, channels: { whatsapp: ['dev'] } }).channels.whatsapp).toEqual(['dev'])
    expect(() => resolveConfig({ channels: { whatsapp: [] } })).toThrow('channels.whatsapp')
  })
})

describe('the fraud guard: WhatsApp is its own channel', () => {
  test('geo: fraud.whatsapp_allowed_countries decides for WhatsApp, fraud.allowed_countries for sms and voice', async () => {
    const h = await guarded({ allowed_countries: ['US'], whatsapp_allowed_countries: ['UZ'], new_country_per_hour: 1000 })
    expect((await h.send({ channel: 'whatsapp', recipient: uz(1) })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(2) })).json.error).toBe('Sending to this destination country is not allowed: UZ')
    expect((await h.send({ channel: 'whatsapp', recipient: us(1) })).json.error).toBe('Sending to this destination country is not allowed: US')
    expect((await h.send({ channel: 'sms', recipient: us(2) })).status).toBe(200)
  })

  test('geo: without its own list WhatsApp follows fraud.allowed_countries', async () => {
    const h = await guarded({ allowed_countries: ['US'], new_country_per_hour: 1000 })
    expect((await h.send({ channel: 'whatsapp', recipient: uz(1) })).status).toBe(403)
    expect((await h.send({ channel: 'whatsapp', recipient: us(1) })).status).toBe(200)
  })

  test('rule 3 counts WhatsApp sends apart: a full hour of sms to a new country leaves WhatsApp its own', async () => {
    const h = await guarded({ new_country_per_hour: 2 })
    for (let i = 0; i < 2; i++) expect((await h.send({ channel: 'sms', recipient: uz(i) })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: uz(9) })).status).toBe(429)
    for (let i = 0; i < 2; i++) expect((await h.send({ channel: 'whatsapp', recipient: uz(10 + i) })).status).toBe(200)
    expect((await h.send({ channel: 'whatsapp', recipient: uz(19) })).status).toBe(429)
    const rows = await h.sql('SELECT country FROM fraud_sends ORDER BY seq')
    expect(rows.map((r) => r.country)).toEqual(['UZ', 'UZ', 'whatsapp:UZ', 'whatsapp:UZ'])
  })

  test('rule 2 counts an IP per channel too', async () => {
    const h = await guarded({ ip_per_hour: 1, new_country_per_hour: 1000 })
    expect((await h.send({ channel: 'sms', recipient: us(1), ip: '203.0.113.7' })).status).toBe(200)
    expect((await h.send({ channel: 'sms', recipient: us(2), ip: '203.0.113.7' })).status).toBe(429)
    expect((await h.send({ channel: 'whatsapp', recipient: us(3), ip: '203.0.113.7' })).status).toBe(200)
    expect((await h.send({ channel: 'whatsapp', recipient: us(4), ip: '203.0.113.7' })).status).toBe(429)
  })

  test('otpd fraud unblock takes WhatsApp scopes as fraud status prints them', () => {
    expect(parseScope('whatsapp:uz')).toEqual({ kind: 'country', scope: 'whatsapp:UZ' })
    expect(parseScope('whatsapp:+99890123')).toEqual({ kind: 'prefix', scope: 'whatsapp:+99890123' })
    expect(parseScope('UZ')).toEqual({ kind: 'country', scope: 'UZ' })
    expect(() => parseScope('whatsapp:XQ')).toThrow("'whatsapp:XQ' is no country code")
  })

  test('whatsapp_allowed_countries is checked like allowed_countries', () => {
    expect(() => resolveConfig({ fraud: { whatsapp_allowed_countries: ['UK'] } })).toThrow("fraud.whatsapp_allowed_countries has 'UK'")
  })
})
