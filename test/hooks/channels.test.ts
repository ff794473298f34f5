/**
 * A hook's own providers (`[hooks.NAME] channels`, docs/integrations.md#the-hooks-table):
 * its messages go through the providers it names, the API's through
 * `[channels]`, each received by a local gateway stub exactly as the
 * `webhook` provider sends it (docs/delivery.md#any-gateway-webhook). Both engines.
 */
import { expect, test } from 'bun:test'
import { closeAfterTest } from '../kit/cleanup.ts'
import { harnessPerTest } from '../kit/harness.ts'
import { hookCall } from '../kit/hooks.ts'
import { startVendorStub } from '../kit/vendor-stub.ts'
import { zitadelHeaders, zitadelSms } from './zitadel-build.ts'

const harness = harnessPerTest()
const KEY = 'n3v1Zx8qPq0aK7uXh2YbT5cW9rLmE4sJ'

test("a hook's SMS go through its own providers; the API's through [channels]", async () => {
  const hookGateway = closeAfterTest(startVendorStub(() => new Response(null, { status: 204 })))
  const apiGateway = closeAfterTest(startVendorStub(() => new Response(null, { status: 204 })))
  const gateway = (url: string) => ({ type: 'webhook', url: `${url}/otp`, secret_env: 'GATEWAY_SECRET' })
  const h = await harness({
    credits: 10,
    configuredDelivery: true,
    env: { GATEWAY_SECRET: 'gateway-secret-0123456789abcdef', ZITADEL_SIGNING_KEY: KEY },
    config: {
      providers: { hook_gw: gateway(hookGateway.url), api_gw: gateway(apiGateway.url) },
      channels: { sms: ['api_gw'] },
      hooks: { zitadel: { type: 'zitadel', account: 'default', secret_env: 'ZITADEL_SIGNING_KEY', channels: { sms: ['hook_gw'] } } },
    },
  })
  const payload = zitadelSms('+41791234567', '739184')
  expect((await hookCall(h, 'zitadel', payload, zitadelHeaders(payload, KEY, h.clock.now()))).status).toBe(200)
  expect(hookGateway.requests).toHaveLength(1)
  const [verification] = await h.sql('SELECT id, delivery_provider FROM verifications')
  expect(verification!.delivery_provider).toBe('hook_gw')
  expect(JSON.parse(hookGateway.requests[0]!.body)).toEqual({
    channel: 'sms',
    recipient: '+41791234567',
    message: 'Your verification code is: 739184',
    verification_id: verification!.id,
    expires_at: new Date(h.clock.now() + 600_000).toISOString(),
  })
  expect(apiGateway.requests).toHaveLength(0)

  expect((await h.send({ channel: 'sms', recipient: '+14155550123' })).status).toBe(200)
  expect(apiGateway.requests).toHaveLength(1)
  expect(hookGateway.requests).toHaveLength(1)
})
