/**
 * `channel: "auto"` and `[[routing]]` (docs/api.md#workflows,
 * docs/delivery.md#routing-by-country), through real Twilio providers and
 * local stubs of Twilio's API: two countries and a `*` table, each with its
 * workflow; per-country providers and senders, each asserted at the stub;
 * the 400s; and `otpd config check`'s problems.
 */
import { describe, expect, test } from 'bun:test'
import { resolveConfig } from '../../src/app/load-config.ts'
import { closeAfterTest } from '../kit/cleanup.ts'
import { cliEnv } from '../kit/cli.ts'
import { expectError, harnessPerTest, type Harness } from '../kit/harness.ts'
import { startVendorStub, type VendorStub } from '../kit/vendor-stub.ts'

const start = harnessPerTest()
const SID = `AC${'0'.repeat(32)}`
const twilio = (url: string, from: string) => ({ type: 'twilio', account_sid: SID, auth_token_env: 'TWILIO_AUTH_TOKEN', from, base_url: url })

/** India: WhatsApp then SMS through `tw_in` as ACMEIN; Brazil: SMS then voice through `tw_main` as ACMEBR; elsewhere SMS as configured. */
function routing(): Record<string, unknown>[] {
  return [
    { countries: ['IN'], workflow: ['whatsapp', 'sms'], channel_timeout: 30, channels: { sms: ['tw_in'] }, from: { tw_in: 'ACMEIN' } },
    { countries: ['BR'], workflow: ['sms', 'voice'], from: { tw_main: 'ACMEBR' } },
    { countries: ['*'], workflow: ['sms'] },
  ]
}

async function setup(routes = routing()): Promise<{ h: Harness; main: VendorStub; india: VendorStub }> {
  const main = closeAfterTest(startVendorStub())
  const india = closeAfterTest(startVendorStub())
  const h = await start({
    credits: 20,
    configuredDelivery: true,
    env: { TWILIO_AUTH_TOKEN: 'twilio-auth-token-0123456789' },
    config: {
      providers: { tw_main: twilio(main.url, '+15005550006'), tw_in: twilio(india.url, '+15005550007') },
      channels: { sms: ['tw_main'], voice: ['tw_main'] },
      routing: routes,
    },
  })
  return { h, main, india }
}

const form = (s: VendorStub, i = -1) => Object.fromEntries(new URLSearchParams(s.requests.at(i)!.body))
const status = async (h: Harness, id: string) => (await h.call(`/api/v1/verifications/${id}`, undefined, { method: 'GET', headers: {} })).json

describe('channel auto', () => {
  test("India: the operator's WhatsApp first, then the SMS through India's provider and sender id", async () => {
    const { h, main, india } = await setup()
    const r = await h.send({ channel: 'auto', recipient: '+919812345678' })
    expect(r.status).toBe(200)
    const s = await status(h, r.json.verification_id)
    expect(s).toMatchObject({ channel: 'whatsapp', current_step: 0, channel_timeout: 30 })
    expect(s.steps.map((x: Record<string, unknown>) => x.channel)).toEqual(['whatsapp', 'sms'])
    expect(india.requests).toHaveLength(0)
    h.clock.advance(30_000)
    expect(await h.server.advanceDue()).toBe(1)
    expect(india.requests).toHaveLength(1)
    expect(form(india)).toMatchObject({ To: '+919812345678', From: 'ACMEIN' })
    expect(main.requests).toHaveLength(0)
  })

  test("Brazil: SMS through the default provider with Brazil's sender id; a plain SMS there too", async () => {
    const { h, main, india } = await setup()
    expect((await h.send({ channel: 'auto', recipient: '+5511987654321' })).status).toBe(200)
    expect(form(main)).toMatchObject({ To: '+5511987654321', From: 'ACMEBR' })
    expect((await h.send({ channel: 'sms', recipient: '+5511987654322' })).status).toBe(200)
    expect(form(main)).toMatchObject({ To: '+5511987654322', From: 'ACMEBR' })
    expect(india.requests).toHaveLength(0)
  })

  test('elsewhere: the `*` table, with the providers and senders of [channels]', async () => {
    const { h, main } = await setup()
    const r = await h.send({ channel: 'auto', recipient: '+14155550123' })
    expect(r.status).toBe(200)
    expect(form(main)).toMatchObject({ To: '+14155550123', From: '+15005550006' })
    expect((await status(h, r.json.verification_id)).steps).toHaveLength(1)
  })

  test('a plain SMS to India goes through its table too', async () => {
    const { h, main, india } = await setup()
    expect((await h.send({ channel: 'sms', recipient: '+919812345670' })).status).toBe(200)
    expect(form(india)).toMatchObject({ To: '+919812345670', From: 'ACMEIN' })
    expect(main.requests).toHaveLength(0)
  })

  test('400s: an email address; a country no table gives a workflow; nothing charged', async () => {
    const { h } = await setup(routing().slice(0, 2))
    expectError(await h.send({ channel: 'auto', recipient: 'ann@example.com' }), 400, 'recipient must be a valid E.164 phone number for SMS and voice channels')
    expectError(await h.send({ channel: 'auto', recipient: '+14155550123' }), 400, "channel auto has no workflow for this recipient's country")
    expect((await h.server.admin.balance()).balance).toBe(20)
  })
})

describe('otpd config check', () => {
  const base = { providers: { tw: { type: 'twilio', account_sid: SID, auth_token_env: 'T', from: '+15005550006' } }, channels: { sms: ['tw'] } }
  const problems = (routing: unknown[]): string => {
    try {
      resolveConfig({ ...base, routing }, 'test', { T: 'token' })
      return ''
    } catch (err) {
      return String(err)
    }
  }
  test('names unknown countries, repeated countries, channels and providers', () => {
    expect(problems([{ countries: ['IN'], workflow: ['sms'] }])).toBe('')
    expect(problems([{ countries: ['XQ'] }])).toContain("routing[0].countries names 'XQ', which is not a known ISO 3166-1 country code")
    expect(problems([{ countries: ['IN'] }, { countries: ['IN', '*'] }])).toContain("routing[1].countries names 'IN', which routing[0] names already")
    expect(problems([{ countries: ['IN'], workflow: ['sms', 'fax'] }])).toContain('routing')
    expect(problems([{ countries: ['IN'], workflow: ['sms', 'sms'] }])).toContain("routing[0].workflow names 'sms' twice")
    expect(problems([{ countries: ['IN'], channels: { sms: ['nope'] } }])).toContain("routing[0]: channels.sms names provider 'nope', which is not defined")
    expect(problems([{ countries: ['IN'], from: { nope: 'ACME' } }])).toContain("routing[0].from names provider 'nope', which is not defined")
    expect(problems([{ countries: ['IN'], from: { tw: 'not a sender id!' } }])).toContain('routing[0]: providers.tw.from')
  })
})

describe('otpd routing show', () => {
  const TOML = `
[providers.tw_main]
type = "twilio"
account_sid = "${SID}"
auth_token_env = "TWILIO_AUTH_TOKEN"
from = "+15005550006"

[providers.tw_in]
type = "twilio"
account_sid = "${SID}"
auth_token_env = "TWILIO_AUTH_TOKEN"
from = "+15005550007"

[channels]
sms = ["tw_main"]

[[routing]]
countries = ["IN"]
workflow = ["whatsapp", "sms"]
channel_timeout = 30
from = { tw_in = "ACMEIN" }
[routing.channels]
sms = ["tw_in"]

[[routing]]
countries = ["*"]
workflow = ["sms"]
`
  test("prints a number's country, table, auto workflow, and each channel's providers and senders", async () => {
    const env = closeAfterTest(await cliEnv(TOML, { TWILIO_AUTH_TOKEN: 'twilio-auth-token-0123456789' }, { noDatabase: true }))
    expect(env.json('routing', 'show', '+919812345678', '--json')).toMatchObject({
      country: 'IN',
      table: 'routing[0]',
      auto: ['whatsapp', 'sms'],
      channel_timeout: 30,
      channels: { sms: [{ provider: 'tw_in', from: 'ACMEIN' }] },
    })
    const us = env.run('routing', 'show', '+14155550123')
    expect(us.code).toBe(0)
    expect(us.stdout).toContain('country US  routing[1]')
    expect(us.stdout).toContain('auto      sms (channel_timeout 60 s)')
    expect(us.stdout).toContain('sms       tw_main (from +15005550006)')
    const bad = env.run('routing', 'show', 'ann@example.com')
    expect(bad.code).not.toBe(0)
  })
})
