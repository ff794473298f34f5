/**
 * Delivery receipts (docs/api.md#delivery-receipts), end to end: a real send through
 * the configured provider to a local vendor stub, which records the callback
 * otpd asked for; then the vendor's receipt, signed as the vendor signs it
 * (Twilio by its own Node library), posted to /api/v1/receipts/{provider}.
 */
import { expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import twilio from 'twilio'
import { resolveConfig } from '../../src/app/load-config.ts'
import { webhookSignature } from '../../src/delivery/webhook-provider.ts'
import type { NewEvent } from '../../src/otp/ports/index.ts'
import { harnessPerTest, TEST, type Harness } from '../kit/harness.ts'
import { sameDatabase } from '../kit/same-database.ts'
import { watchEvents } from '../kit/watch-events.ts'
import { startVendorStub, type VendorStub } from '../kit/vendor-stub.ts'
import { closeAfterTest } from '../kit/cleanup.ts'

const PUBLIC = 'https://otp.example.com'
const SID = 'AC' + '0123456789abcdef'.repeat(2)
const TOKEN = 'twilio-auth-token-0123456789'
const VONAGE_SIG_SECRET = 'vonage-signature-secret-0123'
const HOOK_SECRET = 'whsec-gateway-0123456789abcdef'
const ENV = { TWILIO_AUTH_TOKEN: TOKEN, VONAGE_API_SECRET: 'vonage-api-secret', VONAGE_SIGNATURE_SECRET: VONAGE_SIG_SECRET, HOOK_SECRET }

const start = harnessPerTest()

type Kind = 'twilio' | 'vonage' | 'webhook'
const NAMES: Record<Kind, string> = { twilio: 'twilio_main', vonage: 'vonage_main', webhook: 'gateway' }

async function setup(kind: Kind, opts: { publicUrl?: string | null; answer?: () => Promise<Response> | Response } = {}) {
  const stub: VendorStub = startVendorStub(
    opts.answer ??
      (() =>
        kind === 'twilio'
          ? Response.json({ sid: 'SM0123', status: 'queued' }, { status: 201 })
          : kind === 'vonage'
            ? Response.json({ 'message-count': '1', messages: [{ 'message-id': '0C000000', status: '0' }] })
            : new Response(null, { status: 204 })),
  )
  closeAfterTest(stub)
  const providers = {
    twilio_main: { type: 'twilio', account_sid: SID, auth_token_env: 'TWILIO_AUTH_TOKEN', from: '+15005550006', base_url: stub.url },
    vonage_main: {
      type: 'vonage',
      api_key: 'abcd1234',
      api_secret_env: 'VONAGE_API_SECRET',
      signature_secret_env: 'VONAGE_SIGNATURE_SECRET',
      from: 'Acme',
      base_url: stub.url,
    },
    gateway: { type: 'webhook', url: `${stub.url}/otp`, secret_env: 'HOOK_SECRET' },
    printer: { type: 'log' },
  }
  const server = opts.publicUrl === null ? {} : { public_url: opts.publicUrl ?? PUBLIC }
  const h = await start({
    credits: 20,
    configuredDelivery: true,
    env: ENV,
    config: { server, providers, channels: { sms: [NAMES[kind]], email: ['printer'] }, limits: { recipient_per_minute: 100, recipient_per_hour: 100 } },
  })
  return { h, stub }
}

/** The events the server writes, as the outbox (docs/api.md#events) is handed them. */
async function recordEvents(h: Harness): Promise<NewEvent[]> {
  return watchEvents(h)
}

/** Sends an SMS; returns its id once its `accepted` record is written. */
async function sendSms(h: Harness, recipient = '+14155550123'): Promise<string> {
  const r = await h.send({ channel: 'sms', recipient })
  expect(r.status).toBe(200)
  await h.server.storage.settled()
  return r.json.verification_id
}

async function delivery(h: Harness, id: string): Promise<{ delivery: string | null; provider: string | null }> {
  const [row] = await h.sql('SELECT delivery, delivery_provider AS provider FROM verifications WHERE id = $1', [id])
  return { delivery: row!.delivery, provider: row!.provider }
}

/** POSTs a receipt the way the vendor does: to the host otpd listens on (not the public one), with the public URL's path and query. */
async function postReceipt(h: Harness, pathAndQuery: string, body: string, headers: Record<string, string>) {
  const res = await h.server.http.handle(new Request(`http://127.0.0.1:8080${pathAndQuery}`, { method: 'POST', headers, body }))
  const text = await res.text()
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} }
}

// --- Twilio -----------------------------------------------------------------

function twilioCallback(stub: VendorStub, n = -1): string {
  const url = new URLSearchParams(stub.requests.at(n)!.body).get('StatusCallback')
  expect(url).not.toBeNull()
  return url!
}

/** A status callback as Twilio posts it, signed with Twilio's own library. */
function twilioReceipt(callback: string, status: string, token = TOKEN, extra: Record<string, string> = {}) {
  const params: Record<string, string> = {
    ApiVersion: '2010-04-01',
    AccountSid: SID,
    MessageSid: 'SM0123',
    SmsSid: 'SM0123',
    MessageStatus: status,
    SmsStatus: status,
    From: '+15005550006',
    To: '+14155550123',
    ...extra,
  }
  const signature = twilio.getExpectedTwilioSignature(token, callback, params)
  // The library agrees that this request is Twilio's exactly when it was signed with the account's token.
  expect(twilio.validateRequest(TOKEN, signature, callback, params)).toBe(token === TOKEN)
  return { body: new URLSearchParams(params).toString(), signature }
}

async function postTwilio(h: Harness, callback: string, r: { body: string; signature?: string }) {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' }
  if (r.signature !== undefined) headers['x-twilio-signature'] = r.signature
  return postReceipt(h, callback.slice(PUBLIC.length), r.body, headers)
}

test('twilio: every message carries StatusCallback = <public_url>/api/v1/receipts/<name>?verification_id=<id>, exactly', async () => {
  const { h, stub } = await setup('twilio')
  const id = await sendSms(h)
  expect(stub.requests).toHaveLength(1)
  const callback = `${PUBLIC}/api/v1/receipts/twilio_main?verification_id=${id}`
  const code = /Body=Your\+verification\+code\+is%3A\+(\d+)/.exec(stub.requests[0]!.body)![1]
  expect(stub.requests[0]!.body).toBe(
    `To=%2B14155550123&From=%2B15005550006&Body=Your+verification+code+is%3A+${code}&StatusCallback=${encodeURIComponent(callback)}`,
  )
  expect(twilioCallback(stub)).toBe(callback)
  expect(await delivery(h, id)).toEqual({ delivery: 'accepted', provider: 'twilio_main' })
})

test("twilio: a receipt signed by Twilio's library is accepted; delivered -> delivered, with its event", async () => {
  const { h, stub } = await setup('twilio')
  const id = await sendSms(h)
  const events = await recordEvents(h)
  const r = await postTwilio(h, twilioCallback(stub), twilioReceipt(twilioCallback(stub), 'delivered'))
  expect(r.status).toBe(200)
  expect(r.json.success).toBe(true)
  expect(await delivery(h, id)).toEqual({ delivery: 'delivered', provider: 'twilio_main' })
  expect(events).toHaveLength(1)
  expect(events[0]).toMatchObject({ type: 'verification.delivered', at: h.clock.now(), status: 'pending', extra: { provider: 'twilio_main' } })
  expect(events[0]!.verification).toMatchObject({ id, delivery: 'delivered', deliveryProvider: 'twilio_main', deliveryUpdatedAt: h.clock.now() })
  // A later receipt changes nothing, and so reports nothing.
  expect((await postTwilio(h, twilioCallback(stub), twilioReceipt(twilioCallback(stub), 'failed'))).status).toBe(200)
  expect(events).toHaveLength(1)
  // The status route shows it (docs/api.md#verification-status).
  const shown = await h.call(`/api/v1/verifications/${id}`, undefined, { method: 'GET' })
  expect(shown.json.status).toBe('pending')
  expect(shown.json.delivery).toEqual({
    status: 'delivered',
    provider: 'twilio_main',
    updated_at: new Date(h.clock.now()).toISOString(),
    encoding: 'GSM-7',
    segments: 1,
  })
})

test('an undelivered receipt emits verification.undelivered; test recipients and unknown messages emit nothing', async () => {
  const { h } = await setup('webhook')
  const id = await sendSms(h)
  const events = await recordEvents(h)
  expect((await postHook(h, JSON.stringify({ verification_id: id, status: 'undelivered' }))).status).toBe(200)
  expect(events.map((e) => [e.type, e.extra.provider, e.verification?.id])).toEqual([['verification.undelivered', 'gateway', id]])
  const test = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  events.length = 0
  expect((await postHook(h, JSON.stringify({ verification_id: test.json.verification_id, status: 'delivered' }))).status).toBe(200)
  expect((await postHook(h, JSON.stringify({ verification_id: '6f1c2b9e-3d4a-4c5b-8e7f-0a1b2c3d4e5f', status: 'delivered' }))).status).toBe(200)
  expect(events).toEqual([])
})

test('twilio: a tampered, unsigned or wrongly keyed receipt is 403 `Invalid signature` and changes nothing', async () => {
  const { h, stub } = await setup('twilio')
  const id = await sendSms(h)
  const callback = twilioCallback(stub)
  const signed = twilioReceipt(callback, 'undelivered')
  const cases = [
    { body: signed.body.replace('MessageStatus=undelivered', 'MessageStatus=delivered'), signature: signed.signature }, // body changed
    {
      body: signed.body,
      signature: signed.signature,
      path: callback.replace(
        id,
        id.replace(/.$/, (c) => (c === '0' ? '1' : '0')),
      ),
    }, // URL changed
    { body: signed.body }, // no signature
    { body: signed.body, signature: '' },
    twilioReceipt(callback, 'undelivered', 'another-auth-token'),
  ]
  for (const c of cases) {
    const r = await postTwilio(h, 'path' in c && c.path ? c.path : callback, c)
    expect(r.status).toBe(403)
    expect(r.json.error).toBe('Invalid signature')
    expect(typeof r.json.request_id).toBe('string')
    expect(await delivery(h, id)).toEqual({ delivery: 'accepted', provider: 'twilio_main' })
  }
  // The signature covers the public URL, not the Host header: signing the URL the request really went to fails.
  const hostSigned = twilioReceipt(`http://127.0.0.1:8080${callback.slice(PUBLIC.length)}`, 'delivered')
  expect((await postTwilio(h, callback, hostSigned)).status).toBe(403)
  expect((await delivery(h, id)).delivery).toBe('accepted')
})

test('twilio: undelivered and failed -> undelivered; other statuses change nothing', async () => {
  const { h, stub } = await setup('twilio')
  for (const status of ['undelivered', 'failed']) {
    const id = await sendSms(h)
    for (const early of ['queued', 'sending', 'sent', 'accepted']) {
      expect((await postTwilio(h, twilioCallback(stub), twilioReceipt(twilioCallback(stub), early))).status).toBe(200)
      expect((await delivery(h, id)).delivery).toBe('accepted')
    }
    expect((await postTwilio(h, twilioCallback(stub), twilioReceipt(twilioCallback(stub), status))).status).toBe(200)
    expect(await delivery(h, id)).toEqual({ delivery: 'undelivered', provider: 'twilio_main' })
  }
})

test('twilio: receipts out of order end at the first final status', async () => {
  const { h, stub } = await setup('twilio')
  const a = await sendSms(h)
  const cbA = twilioCallback(stub)
  const seen: (string | null)[] = []
  for (const status of ['sent', 'delivered', 'sent', 'undelivered', 'failed', 'queued']) {
    expect((await postTwilio(h, cbA, twilioReceipt(cbA, status))).status).toBe(200)
    seen.push((await delivery(h, a)).delivery)
  }
  expect(seen).toEqual(['accepted', 'delivered', 'delivered', 'delivered', 'delivered', 'delivered'])
  const b = await sendSms(h)
  const cbB = twilioCallback(stub)
  for (const status of ['failed', 'delivered', 'sent']) expect((await postTwilio(h, cbB, twilioReceipt(cbB, status))).status).toBe(200)
  expect((await delivery(h, b)).delivery).toBe('undelivered')
})

test("twilio: a receipt that outruns the send's own `accepted` record stays final", async () => {
  let release!: () => void
  const gate = new Promise<void>((r) => (release = r))
  const { h, stub } = await setup('twilio', {
    answer: async () => {
      await gate
      return Response.json({ sid: 'SM0123', status: 'queued' }, { status: 201 })
    },
  })
  const sending = h.send({ channel: 'sms', recipient: '+14155550123' })
  while (stub.requests.length === 0) await Bun.sleep(5)
  const callback = twilioCallback(stub)
  const id = new URL(callback).searchParams.get('verification_id')!
  expect((await delivery(h, id)).delivery).toBe('sending')
  const events = await recordEvents(h)
  expect((await postTwilio(h, callback, twilioReceipt(callback, 'delivered'))).status).toBe(200)
  expect(await delivery(h, id)).toEqual({ delivery: 'delivered', provider: 'twilio_main' })
  release()
  expect((await sending).status).toBe(200)
  await h.server.storage.settled()
  expect(await delivery(h, id)).toEqual({ delivery: 'delivered', provider: 'twilio_main' })
  // `sent` once, before `delivered`: the receipt says it, and the send's late record of `accepted` changes nothing.
  expect(events.map((e) => [e.type, e.extra.provider, e.verification?.delivery])).toEqual([
    ['verification.sent', 'twilio_main', 'accepted'],
    ['verification.delivered', 'twilio_main', 'delivered'],
  ])
})

test('receipts for unknown messages answer 200 and change nothing', async () => {
  const { h, stub } = await setup('twilio')
  const id = await sendSms(h)
  const base = `${PUBLIC}/api/v1/receipts/twilio_main`
  for (const url of [
    `${base}?verification_id=6f1c2b9e-3d4a-4c5b-8e7f-0a1b2c3d4e5f`, // well-formed, no such verification
    `${base}?verification_id=nope`,
    base, // no id at all
  ]) {
    const r = await postTwilio(h, url, twilioReceipt(url, 'delivered'))
    expect(r.status).toBe(200)
  }
  expect((await delivery(h, id)).delivery).toBe('accepted')
  // A test recipient has no delivery and takes no receipt.
  const test = await h.send({ channel: 'sms', recipient: TEST.PHONE_SUCCESS })
  const url = `${base}?verification_id=${test.json.verification_id}`
  expect((await postTwilio(h, url, twilioReceipt(url, 'delivered'))).status).toBe(200)
  expect((await delivery(h, test.json.verification_id)).delivery).toBeNull()
  expect(stub.requests).toHaveLength(1)
})

test('a receipt from another provider than the one that took the message changes nothing', async () => {
  const { h, stub } = await setup('twilio')
  const id = await sendSms(h)
  // vonage_main is configured (with its secret) but did not send this one.
  const params: Record<string, string> = { 'client-ref': id, status: 'delivered', messageId: '0C000000', timestamp: '1767268800', nonce: 'n' }
  const r = await postVonage(h, params, VONAGE_SIG_SECRET)
  expect(r.status).toBe(200)
  expect(await delivery(h, id)).toEqual({ delivery: 'accepted', provider: 'twilio_main' })
  expect(stub.requests).toHaveLength(1)
})

test('unknown provider, a provider without receipts, receipts off: 404 `Not found`; another method: 405', async () => {
  const { h } = await setup('twilio')
  for (const name of ['nobody', 'printer', 'constructor']) {
    const r = await postReceipt(h, `/api/v1/receipts/${name}`, 'MessageStatus=delivered', { 'content-type': 'application/x-www-form-urlencoded' })
    expect(r.status).toBe(404)
    expect(r.json.error).toBe('Not found')
  }
  const get = await h.server.http.handle(new Request('http://localhost/api/v1/receipts/twilio_main'))
  expect(get.status).toBe(405)
  expect(((await get.json()) as Record<string, unknown>).error).toBe('Method not allowed')

  const off = await setup('twilio', { publicUrl: null })
  const id = await sendSms(off.h)
  expect(new URLSearchParams(off.stub.requests[0]!.body).has('StatusCallback')).toBe(false)
  const url = `${PUBLIC}/api/v1/receipts/twilio_main?verification_id=${id}`
  const r = await postTwilio(off.h, url, twilioReceipt(url, 'delivered'))
  expect(r.status).toBe(404)
  expect(r.json.error).toBe('Not found')
  expect((await delivery(off.h, id)).delivery).toBe('accepted')
})

// --- Vonage -----------------------------------------------------------------

/** The SMS API's signature as Vonage documents it for signed messages, written here independently of src/. */
function vonageSig(params: Record<string, string>, secret: string): string {
  const data = Object.keys(params)
    .filter((k) => k !== 'sig')
    .sort()
    .map((k) => `&${k}=${params[k]!.replace(/[&=]/g, '_')}`)
    .join('')
  return createHmac('sha256', secret).update(data).digest('hex')
}

async function postVonage(
  h: Harness,
  params: Record<string, string>,
  secret: string | null,
  opts: { json?: boolean; tamper?: (p: Record<string, string>) => void } = {},
) {
  const signed = secret === null ? { ...params } : { ...params, sig: vonageSig(params, secret) }
  opts.tamper?.(signed)
  return opts.json
    ? postReceipt(h, '/api/v1/receipts/vonage_main', JSON.stringify(signed), { 'content-type': 'application/json' })
    : postReceipt(h, '/api/v1/receipts/vonage_main', new URLSearchParams(signed).toString(), { 'content-type': 'application/x-www-form-urlencoded' })
}

function dlr(id: string, status: string): Record<string, string> {
  return {
    msisdn: '14155550123',
    to: 'Acme',
    'network-code': '310260',
    messageId: '0C000000',
    price: '0.00570000',
    status,
    scts: '2601011200',
    'err-code': status === 'delivered' ? '0' : '1',
    'api-key': 'abcd1234',
    'client-ref': id,
    'message-timestamp': '2026-01-01 12:00:05',
    timestamp: '1767268805',
    nonce: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d',
  }
}

test('vonage: every SMS asks for a receipt: status-report-req=1, callback, client-ref = the verification id, exactly', async () => {
  const { h, stub } = await setup('vonage')
  const id = await sendSms(h)
  const r = stub.requests[0]!
  expect(r.path).toBe('/sms/json')
  const code = /text=Your\+verification\+code\+is%3A\+(\d+)/.exec(r.body)![1]
  expect(r.body).toBe(
    `api_key=abcd1234&api_secret=vonage-api-secret&from=Acme&to=14155550123&text=Your+verification+code+is%3A+${code}` +
      `&status-report-req=1&callback=${encodeURIComponent(`${PUBLIC}/api/v1/receipts/vonage_main`)}&client-ref=${id}`,
  )
  expect(await delivery(h, id)).toEqual({ delivery: 'accepted', provider: 'vonage_main' })
})

test('vonage: signed receipts (form or JSON) are recorded; unsigned or tampered ones are 403', async () => {
  const { h } = await setup('vonage')
  const a = await sendSms(h)
  for (const bad of [
    await postVonage(h, dlr(a, 'delivered'), null), // unsigned
    await postVonage(h, dlr(a, 'delivered'), 'another-secret'),
    await postVonage(h, dlr(a, 'failed'), VONAGE_SIG_SECRET, { tamper: (p) => (p.status = 'delivered') }),
    await postVonage(h, dlr(a, 'delivered'), VONAGE_SIG_SECRET, { tamper: (p) => (p['client-ref'] = `${a}0`) }),
  ]) {
    expect(bad.status).toBe(403)
    expect(bad.json.error).toBe('Invalid signature')
    expect((await delivery(h, a)).delivery).toBe('accepted')
  }
  expect((await postVonage(h, dlr(a, 'accepted'), VONAGE_SIG_SECRET)).status).toBe(200)
  expect((await postVonage(h, dlr(a, 'buffered'), VONAGE_SIG_SECRET, { json: true })).status).toBe(200)
  expect((await delivery(h, a)).delivery).toBe('accepted')
  // Upper-case hex, as the dashboard's examples show it, is the same signature.
  const upper = await postVonage(h, dlr(a, 'delivered'), VONAGE_SIG_SECRET, { tamper: (p) => (p.sig = p.sig!.toUpperCase()) })
  expect(upper.status).toBe(200)
  expect(await delivery(h, a)).toEqual({ delivery: 'delivered', provider: 'vonage_main' })
  for (const status of ['failed', 'rejected', 'expired']) {
    const id = await sendSms(h)
    const r = await postVonage(h, dlr(id, status), VONAGE_SIG_SECRET, { json: true })
    expect(r.status).toBe(200)
    expect(await delivery(h, id)).toEqual({ delivery: 'undelivered', provider: 'vonage_main' })
    expect((await postVonage(h, dlr(id, 'delivered'), VONAGE_SIG_SECRET)).status).toBe(200)
    expect((await delivery(h, id)).delivery).toBe('undelivered')
  }
})

// --- webhook ----------------------------------------------------------------

async function postHook(h: Harness, body: string, opts: { secret?: string; at?: number; signature?: string | null } = {}) {
  const at = opts.at ?? Math.floor(h.clock.now() / 1000)
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  const signature = opts.signature === undefined ? webhookSignature(opts.secret ?? HOOK_SECRET, at, body) : opts.signature
  if (signature !== null) headers['x-otpd-signature'] = signature
  return postReceipt(h, '/api/v1/receipts/gateway', body, headers)
}

test('webhook: the gateway is told where to send receipts (receipt_url in the signed body)', async () => {
  const { h, stub } = await setup('webhook')
  const id = await sendSms(h)
  const body = JSON.parse(stub.requests[0]!.body) as Record<string, unknown>
  expect(Object.keys(body)).toEqual(['channel', 'recipient', 'message', 'verification_id', 'expires_at', 'receipt_url'])
  expect(body.receipt_url).toBe(`${PUBLIC}/api/v1/receipts/gateway`)
  expect(body.verification_id).toBe(id)
})

test('webhook: a signed receipt is recorded; tampered, unsigned, wrongly keyed or stale ones are 403', async () => {
  const { h } = await setup('webhook')
  const id = await sendSms(h)
  const body = JSON.stringify({ verification_id: id, status: 'undelivered' })
  const good = webhookSignature(HOOK_SECRET, Math.floor(h.clock.now() / 1000), body)
  for (const bad of [
    await postHook(h, body.replace('undelivered', 'delivered'), { signature: good }),
    await postHook(h, body, { signature: null }),
    await postHook(h, body, { signature: 'garbage' }),
    await postHook(h, body, { secret: 'another-secret' }),
    await postHook(h, body, { at: Math.floor(h.clock.now() / 1000) - 301 }),
  ]) {
    expect(bad.status).toBe(403)
    expect(bad.json.error).toBe('Invalid signature')
    expect((await delivery(h, id)).delivery).toBe('accepted')
  }
  expect((await postHook(h, JSON.stringify({ verification_id: id, status: 'sent' }))).status).toBe(200)
  expect((await delivery(h, id)).delivery).toBe('accepted')
  expect((await postHook(h, body, { signature: good })).status).toBe(200)
  expect(await delivery(h, id)).toEqual({ delivery: 'undelivered', provider: 'gateway' })
  expect((await postHook(h, JSON.stringify({ verification_id: id, status: 'delivered' }))).status).toBe(200)
  expect((await delivery(h, id)).delivery).toBe('undelivered')
  // Signed but not a JSON object: the gateway's fault, said as for any body.
  const notJson = await postHook(h, '{')
  expect([notJson.status, notJson.json.error]).toEqual([400, 'Request body must be valid JSON'])
  const notObject = await postHook(h, '[1]')
  expect([notObject.status, notObject.json.error]).toEqual([400, 'Request body must be a JSON object'])
  const big = await postHook(h, JSON.stringify({ pad: 'x'.repeat(20_000) }))
  expect([big.status, big.json.error]).toEqual([413, 'Request body too large'])
})

test('webhook: delivered -> delivered', async () => {
  const { h } = await setup('webhook')
  const id = await sendSms(h)
  expect((await postHook(h, JSON.stringify({ status: 'delivered', verification_id: id }))).status).toBe(200)
  expect(await delivery(h, id)).toEqual({ delivery: 'delivered', provider: 'gateway' })
})

test("a reload that changes a provider's secret changes the signature receipts need", async () => {
  const { h } = await setup('webhook')
  const a = await sendSms(h)
  const b = await sendSms(h)
  const same = sameDatabase(h)
  const raw = {
    server: { ...same.server, public_url: PUBLIC },
    database: same.database,
    providers: { gateway: { type: 'webhook', url: 'http://127.0.0.1:9/otp', secret_env: 'HOOK_SECRET' } },
    channels: { sms: ['gateway'] },
  }
  h.server.reload(resolveConfig(raw, 'test', { ...ENV, HOOK_SECRET: 'whsec-rotated-0123456789' }), { ...ENV, HOOK_SECRET: 'whsec-rotated-0123456789' })
  const old = await postHook(h, JSON.stringify({ verification_id: a, status: 'delivered' }))
  expect([old.status, old.json.error]).toEqual([403, 'Invalid signature'])
  expect((await delivery(h, a)).delivery).toBe('accepted')
  expect((await postHook(h, JSON.stringify({ verification_id: b, status: 'delivered' }), { secret: 'whsec-rotated-0123456789' })).status).toBe(200)
  expect((await delivery(h, b)).delivery).toBe('delivered')
})
