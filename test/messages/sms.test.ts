/**
 * What an SMS carries and costs (docs/messages.md#encoding-and-segments,
 * #autofill), through the Twilio, Vonage and webhook stubs: the exact bytes
 * with the autofill lines, transliteration to GSM-7, `sms_max_segments`, and
 * the segments in the status, the event and the metrics.
 */
import { describe, expect, test } from 'bun:test'
import { createHarness, type Harness } from '../kit/harness.ts'
import { startVendorStub } from '../kit/vendor-stub.ts'
import { closeAfterTest } from '../kit/cleanup.ts'

const SID = 'AC' + '0123456789abcdef'.repeat(2)
const MX = '+525512345678'
const US = '+14155550123'
const LOOSE = { recipient_per_minute: 100, recipient_per_hour: 100, recipient_per_day: 100 }

type Vendor = 'twilio' | 'vonage' | 'webhook'

/** A server whose SMS goes to one vendor's stub; `body()` is the last text that vendor received. */
async function viaStub(vendor: Vendor, messages: Record<string, unknown> = {}) {
  const stub = startVendorStub((r) =>
    vendor === 'twilio'
      ? Response.json({ sid: 'SM1', status: 'queued' }, { status: 201 })
      : vendor === 'vonage'
        ? Response.json({ 'message-count': '1', messages: [{ to: r.path, 'message-id': '0C00', status: '0' }] })
        : new Response(null, { status: 204 }),
  )
  const providers = {
    twilio: { type: 'twilio', account_sid: SID, auth_token_env: 'TOKEN', from: '+15005550006', base_url: stub.url },
    vonage: { type: 'vonage', api_key: 'abcd1234', api_secret_env: 'TOKEN', from: 'Acme', base_url: stub.url },
    webhook: { type: 'webhook', url: `${stub.url}/otp`, secret_env: 'TOKEN' },
  }
  const h = await createHarness({
    credits: 50,
    configuredDelivery: true,
    env: { TOKEN: 'vendor-token-0123456789abcdef' },
    config: { providers: { p: providers[vendor] }, channels: { sms: ['p'] }, messages, limits: LOOSE },
  })
  closeAfterTest(stub)
  closeAfterTest(h)
  const body = (): { text: string; type?: string } => {
    const raw = stub.requests.at(-1)!.body
    if (vendor === 'webhook') return { text: JSON.parse(raw).message }
    const form = new URLSearchParams(raw)
    return vendor === 'twilio' ? { text: form.get('Body')! } : { text: form.get('text')!, type: form.get('type') ?? undefined }
  }
  return { h, stub, body }
}

/** The status once the send's outcome is recorded (the answer does not wait for it). */
async function statusOf(h: Harness, id: string) {
  await h.server.storage.settled()
  return (await h.call(`/api/v1/verifications/${id}`, undefined, { method: 'GET' })).json
}

describe.each(['twilio', 'vonage', 'webhook'] as const)('autofill through %s', (vendor) => {
  test('otp_domain ends the SMS with a blank line and "@domain #code"', async () => {
    const { h, body } = await viaStub(vendor, { otp_domain: 'example.com' })
    expect((await h.send({ channel: 'sms', recipient: US, code: '73915' })).status).toBe(200)
    expect(body().text).toBe('Your verification code is: 73915\n\n@example.com #73915')
  })

  test("app_hash adds the SMS Retriever line before the domain line; an account's domain wins over the config's", async () => {
    const { h, body } = await viaStub(vendor, { otp_domain: 'example.com' })
    await h.server.admin.setMessaging('default', { otpDomain: 'login.example.org' })
    expect((await h.send({ channel: 'sms', recipient: US, code: '73915', app_hash: 'FA+9qCX9VSu', locale: 'es' })).status).toBe(200)
    expect(body().text).toBe('73915 es tu clave de acceso\n\nFA+9qCX9VSu\n@login.example.org #73915')
  })

  test("app_hash alone, on a caller's own message", async () => {
    const { h, body } = await viaStub(vendor)
    expect((await h.send({ channel: 'sms', recipient: US, code: '73915', app_hash: 'FA+9qCX9VSu', message: 'Code {code}' })).status).toBe(200)
    expect(body().text).toBe('Code 73915\n\nFA+9qCX9VSu')
  })
})

describe('transliterate', () => {
  test('off: the stub receives the template as written, UCS-2, and the status says so', async () => {
    const { h, body } = await viaStub('vonage', { templates: { sms: { es: '{code} es tu código' } } })
    const sent = await h.send({ channel: 'sms', recipient: MX, code: '73915', locale: 'es' })
    expect(body()).toEqual({ text: '73915 es tu código', type: 'unicode' })
    expect((await statusOf(h, sent.json.verification_id)).delivery).toMatchObject({ encoding: 'UCS-2', segments: 1 })
  })

  test("on: the stub receives GSM-7 (ó -> o) for templates and built-in texts, never for a caller's own message", async () => {
    const { h, body } = await viaStub('vonage', { transliterate: true, templates: { sms: { es: '{code} es tu código' } } })
    const sent = await h.send({ channel: 'sms', recipient: MX, code: '73915', locale: 'es' })
    expect(body()).toEqual({ text: '73915 es tu codigo' })
    expect((await statusOf(h, sent.json.verification_id)).delivery).toMatchObject({ encoding: 'GSM-7', segments: 1 })
    await h.send({ channel: 'sms', recipient: MX, code: '73915', locale: 'pt' })
    expect(body()).toEqual({ text: '73915 é o seu codigo' })
    const own = await h.send({ channel: 'sms', recipient: MX, code: '73915', message: 'Tu código: {code}' })
    expect(body()).toEqual({ text: 'Tu código: 73915', type: 'unicode' })
    expect((await statusOf(h, own.json.verification_id)).delivery).toMatchObject({ encoding: 'UCS-2', segments: 1 })
  })
})

describe('sms_max_segments', () => {
  test('an SMS over the limit is refused with the exact 400; nothing delivered, charged or stored', async () => {
    const { h, stub } = await viaStub('twilio', { sms_max_segments: 1 })
    const long = `{code} ${'ó'.repeat(70)}`
    const r = await h.send({ channel: 'sms', recipient: US, message: long }, undefined)
    expect(r.status).toBe(400)
    expect(r.json.error).toBe('message is longer than 1 SMS segments')
    expect(stub.requests).toHaveLength(0)
    expect((await h.server.admin.balance()).balance).toBe(50)
    expect(Number((await h.sql('SELECT count(*) AS n FROM verifications'))[0]!.n)).toBe(0)
    // The same text in GSM-7 fits; voice and email are not SMS.
    expect((await h.send({ channel: 'sms', recipient: US, message: `{code} ${'o'.repeat(100)}` })).status).toBe(200)
    expect((await h.send({ channel: 'email', recipient: 'ann@example.com', message: long })).status).not.toBe(400)
  })

  test('the autofill line counts: a text that fits alone is refused with it', async () => {
    const { h } = await viaStub('twilio', { sms_max_segments: 1, otp_domain: 'example.com' })
    const r = await h.send({ channel: 'sms', recipient: US, code: '1234', message: `{code}${'a'.repeat(150)}` })
    expect(r.json.error).toBe('message is longer than 1 SMS segments')
  })

  test('a refusal is not stored for an Idempotency-Key: the fixed request runs', async () => {
    const { h } = await viaStub('twilio', { sms_max_segments: 1 })
    const headers = { 'idempotency-key': 'k-1' }
    const first = await h.call('/api/v1/send', { channel: 'sms', recipient: US, message: `{code} ${'ó'.repeat(70)}` }, { headers })
    expect(first.status).toBe(400)
    const fixed = await h.call('/api/v1/send', { channel: 'sms', recipient: US }, { headers })
    expect(fixed.status).toBe(200)
  })
})

describe('segments recorded', () => {
  test('a 2-segment SMS: status, verification.sent event and otpd_sms_segments_total by country and encoding', async () => {
    const { h } = await viaStub('twilio')
    const sent = await h.send({ channel: 'sms', recipient: MX, code: '73915', message: `{code} ${'ж'.repeat(80)}` })
    expect((await statusOf(h, sent.json.verification_id)).delivery).toMatchObject({ status: 'accepted', provider: 'p', encoding: 'UCS-2', segments: 2 })
    await h.send({ channel: 'sms', recipient: US, code: '73915' })
    await h.server.storage.settled()
    const rows = await h.sql("SELECT body FROM events WHERE type = 'verification.sent' ORDER BY seq")
    const sentEvents = rows.map((e) => JSON.parse(e.body as string).data)
    expect(sentEvents.map((d) => [d.encoding, d.segments])).toEqual([
      ['UCS-2', 2],
      ['GSM-7', 1],
    ])
    const text = await h.server.metrics.render()
    expect(text).toContain('otpd_sms_segments_total{country="MX",encoding="UCS-2"} 2')
    expect(text).toContain('otpd_sms_segments_total{country="US",encoding="GSM-7"} 1')
  })

  test('voice and email record none', async () => {
    const h = await createHarness({ credits: 5 })
    closeAfterTest(h)
    const sent = await h.send({ channel: 'email', recipient: 'ann@example.com' })
    const d = (await statusOf(h, sent.json.verification_id)).delivery
    expect(d).not.toHaveProperty('encoding')
    expect(d).not.toHaveProperty('segments')
  })
})
