/** The `webhook` provider: the JSON body, and the signature checked by a receiver written here as docs/delivery.md tells. */
import { expect, test } from 'bun:test'
import { createHmac, timingSafeEqual } from 'node:crypto'
import { ProviderOptions } from '../../src/delivery/options.ts'
import { RecipientRejectedError } from '../../src/delivery/provider.ts'
import { readWebhook, WebhookProvider } from '../../src/delivery/webhook-provider.ts'
import { outbound, OUTBOUND_AT } from '../kit/outbound.ts'
import { startVendorStub, type Recorded } from '../kit/vendor-stub.ts'
import { closeAfterTest } from '../kit/cleanup.ts'

const SECRET = 'whsec-test-0123456789abcdef'
const NOW = OUTBOUND_AT

/** What a receiver does (docs/delivery.md#any-gateway-webhook): recompute the HMAC over "<t>.<raw body>", compare in constant time, refuse stale t. */
function receiverAccepts(req: Recorded, secret: string, nowSeconds: number): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(req.headers['x-otpd-signature'] ?? '')
  if (!m) return false
  const t = Number(m[1])
  if (Math.abs(nowSeconds - t) > 300) return false
  const expected = createHmac('sha256', secret).update(`${t}.${req.body}`).digest()
  return timingSafeEqual(expected, Buffer.from(m[2]!, 'hex'))
}

function setup(status = 204) {
  const stub = startVendorStub(() => new Response(null, { status }))
  closeAfterTest(stub)
  const o = new ProviderOptions('gateway', { type: 'webhook', url: `${stub.url}/otp`, secret_env: 'OTPD_WEBHOOK_SECRET' }, { OTPD_WEBHOOK_SECRET: SECRET })
  const s = readWebhook(o, ['sms'])
  o.unknownKeys('webhook')
  expect(o.problems).toEqual([])
  return { stub, p: new WebhookProvider('gateway', s, () => NOW) }
}

const msg = outbound()

test('POSTs the documented JSON body with a signature the receiver accepts', async () => {
  const { stub, p } = setup()
  await p.send(msg, AbortSignal.timeout(5000))
  const r = stub.requests[0]!
  expect([r.method, r.path]).toEqual(['POST', '/otp'])
  expect(r.headers['content-type']).toBe('application/json')
  expect(JSON.parse(r.body)).toEqual({
    channel: 'sms',
    recipient: '+14155550123',
    message: 'Your verification code is: 424242',
    verification_id: '9a7c0c1e-0000-4000-8000-000000000001',
    expires_at: '2026-01-01T12:05:00.000Z',
  })
  expect(Object.keys(JSON.parse(r.body))).toEqual(['channel', 'recipient', 'message', 'verification_id', 'expires_at'])
  expect(r.headers['x-otpd-signature']).toStartWith(`t=${NOW / 1000},v1=`)
  expect(receiverAccepts(r, SECRET, NOW / 1000)).toBe(true)
})

test('the receiver refuses a tampered body, a wrong secret and a replay outside its window', async () => {
  const { stub, p } = setup()
  await p.send(msg, AbortSignal.timeout(5000))
  const r = stub.requests[0]!
  expect(receiverAccepts({ ...r, body: r.body.replace('424242', '000000') }, SECRET, NOW / 1000)).toBe(false)
  expect(receiverAccepts(r, 'another-secret', NOW / 1000)).toBe(false)
  expect(receiverAccepts(r, SECRET, NOW / 1000 + 3600)).toBe(false)
})

test('any 2xx is success; 422 rejects the recipient; other statuses fail over', async () => {
  for (const status of [200, 201, 202, 204]) await setup(status).p.send(msg, AbortSignal.timeout(5000))
  const rejected = await setup(422)
    .p.send(msg, AbortSignal.timeout(5000))
    .catch((e) => e)
  expect(rejected).toBeInstanceOf(RecipientRejectedError)
  for (const status of [301, 400, 401, 404, 500, 503]) {
    const err = await setup(status)
      .p.send(msg, AbortSignal.timeout(5000))
      .catch((e) => e)
    expect(err).not.toBeInstanceOf(RecipientRejectedError)
    expect(err.message).toBe(`webhook answered ${status}`)
  }
})

test('config: url and secret are required; the secret is never echoed', () => {
  const o = new ProviderOptions('g', { type: 'webhook', url: 'ftp://x', secret_env: 'my actual secret' }, {})
  readWebhook(o, ['sms'])
  expect(o.problems).toEqual([
    'providers.g.url must be an http:// or https:// URL (got "ftp://x")',
    'providers.g.secret_env must name an environment variable in capitals, such as OTPD_SECRET (the secret itself goes in that variable, not in the file)',
  ])
  const missing = new ProviderOptions('g', { type: 'webhook' }, {})
  readWebhook(missing, ['sms'])
  expect(missing.problems).toEqual([
    'providers.g.url is missing: the gateway\'s address, such as "https://sms-gateway.internal/otp"',
    'providers.g.secret_env is missing: name the environment variable holding the signing secret, such as OTPD_WEBHOOK_SECRET',
  ])
})

test('receipts on: the signed body also names receipt_url, where the gateway posts its receipts', async () => {
  const { stub } = setup()
  const o = new ProviderOptions('gateway', { type: 'webhook', url: `${stub.url}/otp`, secret_env: 'OTPD_WEBHOOK_SECRET' }, { OTPD_WEBHOOK_SECRET: SECRET })
  const p = new WebhookProvider('gateway', readWebhook(o, ['sms']), () => NOW, 'https://otp.example.com/api/v1/receipts/gateway')
  await p.send(msg, AbortSignal.timeout(5000))
  const r = stub.requests[0]!
  expect(JSON.parse(r.body)).toEqual({
    channel: 'sms',
    recipient: '+14155550123',
    message: 'Your verification code is: 424242',
    verification_id: '9a7c0c1e-0000-4000-8000-000000000001',
    expires_at: new Date(NOW + 300_000).toISOString(),
    receipt_url: 'https://otp.example.com/api/v1/receipts/gateway',
  })
  expect(receiverAccepts(r, SECRET, NOW / 1000)).toBe(true)
})
