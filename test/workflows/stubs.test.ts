/**
 * A workflow through real providers and local stubs of their vendors
 * (docs/api.md#workflows): WhatsApp through a stub of Meta's Graph API, SMS
 * through a `webhook` gateway stub. Meta's signed `failed` status (131026,
 * "Message undeliverable": not on WhatsApp) starts the SMS at once, with the
 * same code; a gateway's late receipt for a step that ended goes to that step.
 */
import { expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { ledgerViolations } from '../../scripts/kit/ledger.ts'
import { webhookSignature } from '../../src/delivery/webhook-provider.ts'
import { closeAfterTest } from '../kit/cleanup.ts'
import { harnessPerTest, type Harness } from '../kit/harness.ts'
import { startVendorStub } from '../kit/vendor-stub.ts'
import { waitFor } from '../kit/wait-for.ts'
import { META_ENV, metaAccepted, metaProvider, WAMID } from '../kit/whatsapp.ts'

const start = harnessPerTest()
const GATEWAY_SECRET = 'whsec-gateway-0123456789abcdef'
const PHONE = '+5511987654321'

async function setup(): Promise<{ h: Harness; meta: ReturnType<typeof startVendorStub>; gateway: ReturnType<typeof startVendorStub> }> {
  const meta = closeAfterTest(startVendorStub(() => metaAccepted()))
  const gateway = closeAfterTest(startVendorStub(() => Response.json({ ok: true })))
  const h = await start({
    credits: 10,
    configuredDelivery: true,
    env: { ...META_ENV, GATEWAY_SECRET },
    config: {
      server: { public_url: 'https://otp.example.com' },
      providers: { meta: metaProvider(meta.url), gateway: { type: 'webhook', url: gateway.url, secret_env: 'GATEWAY_SECRET' } },
      channels: { whatsapp: ['meta'], sms: ['gateway'] },
    },
  })
  return { h, meta, gateway }
}

/** Meta's `messages` webhook with one status, signed as Meta signs it. */
function metaStatus(h: Harness, state: string, extra: Record<string, unknown>) {
  const value = {
    messaging_product: 'whatsapp',
    metadata: { display_phone_number: '15550783881', phone_number_id: '106540352242922' },
    statuses: [{ id: WAMID, status: state, timestamp: '1750857384', recipient_id: '5511987654321', ...extra }],
  }
  const body = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: '102290129340398', changes: [{ value, field: 'messages' }] }] })
  const sig = `sha256=${createHmac('sha256', META_ENV.WHATSAPP_APP_SECRET).update(body).digest('hex')}`
  return h.server.http.handle(
    new Request('http://127.0.0.1:8080/api/v1/receipts/meta', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': sig },
      body,
    }),
  )
}

function gatewayReceipt(h: Harness, id: string, status: string) {
  const body = JSON.stringify({ verification_id: id, status })
  return h.call('/api/v1/receipts/gateway', undefined, {
    key: null,
    raw: body,
    headers: { 'x-otpd-signature': webhookSignature(GATEWAY_SECRET, Math.floor(h.clock.now() / 1000), body) },
  })
}

const codeIn = (text: string) => /\b(\d{6})\b/.exec(text)![1]!

test("Meta's failed status (not on WhatsApp) starts the SMS at once, at the gateway, with the same code", async () => {
  const { h, meta, gateway } = await setup()
  const r = await h.send({ recipient: PHONE, workflow: [{ channel: 'whatsapp' }, { channel: 'sms' }] })
  expect(r.status).toBe(200)
  await h.server.storage.settled()
  expect(meta.requests).toHaveLength(1)
  const code = codeIn(meta.requests[0]!.body)
  expect(gateway.requests).toHaveLength(0)
  const errors = [{ code: 131026, title: 'Message undeliverable', message: 'Message undeliverable', error_data: { details: 'Message Undeliverable.' } }]
  expect((await metaStatus(h, 'failed', { errors })).status).toBe(200)
  // After the receipt's answer.
  await waitFor(
    async () =>
      (await h.call(`/api/v1/verifications/${r.json.verification_id}`, undefined, { method: 'GET', headers: {} })).json.steps[1].delivery === 'accepted',
    {
      what: 'the SMS step',
    },
  )
  expect(gateway.requests).toHaveLength(1)
  const sms = JSON.parse(gateway.requests[0]!.body) as Record<string, string>
  expect(sms).toMatchObject({ channel: 'sms', recipient: PHONE, verification_id: r.json.verification_id })
  expect(codeIn(sms.message!)).toBe(code)
  const s = (await h.call(`/api/v1/verifications/${r.json.verification_id}`, undefined, { method: 'GET', headers: {} })).json
  expect(s.steps.map((x: Record<string, unknown>) => [x.channel, x.provider, x.delivery, x.ended_reason])).toEqual([
    ['whatsapp', 'meta', 'undelivered', 'undelivered'],
    ['sms', 'gateway', 'accepted', null],
  ])
  expect((await h.verify({ verification_id: r.json.verification_id, code })).json.verified).toBe(true)
  expect(await ledgerViolations(h.databaseUrl ?? h.dbPath, {}, { now: h.clock.now() })).toEqual([])
})

test("a late receipt of a step that ended is that step's; the current step keeps its own", async () => {
  const { h, gateway } = await setup()
  const r = await h.send({ recipient: PHONE, workflow: [{ channel: 'sms' }, { channel: 'whatsapp' }] })
  await h.server.storage.settled()
  expect(gateway.requests).toHaveLength(1)
  h.clock.advance(60_000)
  expect(await h.server.advanceDue()).toBe(1)
  expect((await gatewayReceipt(h, r.json.verification_id, 'delivered')).status).toBe(200)
  const s = (await h.call(`/api/v1/verifications/${r.json.verification_id}`, undefined, { method: 'GET', headers: {} })).json
  expect(s.delivery).toMatchObject({ status: 'accepted', provider: 'meta' })
  expect(s.steps.map((x: Record<string, unknown>) => [x.channel, x.delivery])).toEqual([
    ['sms', 'delivered'],
    ['whatsapp', 'accepted'],
  ])
})
