/**
 * WhatsApp through Twilio (docs/delivery.md#whatsapp-through-twilio): the
 * Messages resource with `whatsapp:` numbers, the approved authentication
 * Content template and the code as its one variable, through a local stub of
 * Twilio's API; Twilio's WhatsApp errors mapped as Meta's are; status
 * callbacks signed by Twilio's own library, `read` counting as delivered and
 * `ErrorCode` kept.
 */
import { describe, expect, test } from 'bun:test'
import twilio from 'twilio'
import { resolveConfig } from '../../src/app/load-config.ts'
import { ConfigError } from '../../src/config/load.ts'
import { closeAfterTest } from '../kit/cleanup.ts'
import { harnessPerTest, type Harness } from '../kit/harness.ts'
import { startVendorStub, type VendorStub } from '../kit/vendor-stub.ts'
import { eventBodies } from '../kit/whatsapp.ts'

const SID = `AC${'0123456789abcdef'.repeat(2)}`
const TOKEN = 'twilio-auth-token-0123456789'
const CONTENT_SID = `HX${'b'.repeat(32)}`
const PUBLIC = 'https://otp.example.com'

const start = harnessPerTest()

const twilioTable = (url: string, more: Record<string, unknown> = {}) => ({
  type: 'twilio',
  account_sid: SID,
  auth_token_env: 'TWILIO_AUTH_TOKEN',
  whatsapp_from: '+15005550006',
  whatsapp_content_sid: CONTENT_SID,
  base_url: url,
  ...more,
})

async function setup(answer: () => Response = () => Response.json({ sid: 'SM0123', status: 'queued' }, { status: 201 }), backup = false) {
  const stub = startVendorStub(answer)
  const second = startVendorStub(() => Response.json({ sid: 'SM9999', status: 'queued' }, { status: 201 }))
  closeAfterTest(stub)
  closeAfterTest(second)
  const h = await start({
    credits: 20,
    configuredDelivery: true,
    env: { TWILIO_AUTH_TOKEN: TOKEN },
    config: {
      server: { public_url: PUBLIC },
      providers: backup ? { twilio_wa: twilioTable(stub.url), twilio_backup: twilioTable(second.url) } : { twilio_wa: twilioTable(stub.url) },
      channels: { whatsapp: backup ? ['twilio_wa', 'twilio_backup'] : ['twilio_wa'] },
      limits: { recipient_per_minute: 100, recipient_per_hour: 100 },
    },
  })
  return { h, stub, second }
}

const form = (stub: VendorStub, n = 0) => stub.requests[n]!.body

describe('a send', () => {
  test.each([['en'], ['es'], ['pt-BR']])('locale %s: the exact request (the Content template carries its own language)', async (locale) => {
    const { h, stub } = await setup()
    const r = await h.send({ channel: 'whatsapp', recipient: '+5511987654321', locale, code: '482913' })
    expect(r.status).toBe(200)
    const req = stub.requests[0]!
    expect(req.method).toBe('POST')
    expect(req.path).toBe(`/2010-04-01/Accounts/${SID}/Messages.json`)
    expect(req.headers.authorization).toBe(`Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`)
    expect(req.headers['content-type']).toBe('application/x-www-form-urlencoded')
    const callback = `${PUBLIC}/api/v1/receipts/twilio_wa?verification_id=${r.json.verification_id}`
    expect(form(stub)).toBe(
      new URLSearchParams({
        To: 'whatsapp:+5511987654321',
        From: 'whatsapp:+15005550006',
        ContentSid: CONTENT_SID,
        ContentVariables: '{"1":"482913"}',
        StatusCallback: callback,
      }).toString(),
    )
  })

  test.each([[63024], [63003]])('%i (not on WhatsApp): final for the channel, the backup is not tried; 500 and refunded', async (code) => {
    const { h, second } = await setup(() => Response.json({ code, message: 'Invalid message recipient', status: 400 }, { status: 400 }), true)
    const r = await h.send({ channel: 'whatsapp', recipient: '+14155550123' })
    expect(r.status).toBe(500)
    expect(second.requests).toHaveLength(0)
    expect((await h.server.admin.balance()).balance).toBe(20)
  })

  test.each([
    [429, 63018],
    [500, 63012],
    [503, 20500],
  ])('%i %i (rate limit, a fault): the next provider takes it', async (httpStatus, code) => {
    const { h, second } = await setup(() => Response.json({ code, message: 'x', status: httpStatus }, { status: httpStatus }), true)
    expect((await h.send({ channel: 'whatsapp', recipient: '+14155550123' })).status).toBe(200)
    expect(second.requests).toHaveLength(1)
  })

  test.each([
    [63016, 'whatsapp_content_sid'],
    [63027, 'whatsapp_content_sid'],
    [21655, 'whatsapp_content_sid'],
    [63007, 'whatsapp_from'],
    [20003, 'auth_token_env'],
  ])('%i: misconfigured, an error line naming providers.twilio_wa.%s; the next provider takes it', async (code, setting) => {
    const { h, second } = await setup(() => Response.json({ code, message: 'x', status: 400 }, { status: 400 }), true)
    expect((await h.send({ channel: 'whatsapp', recipient: '+14155550123' })).status).toBe(200)
    expect(second.requests).toHaveLength(1)
    const line = JSON.parse(h.logs.find((l) => l.includes('provider misconfigured: twilio_wa'))!) as Record<string, string>
    expect(line.level).toBe('error')
    expect(line.setting).toBe(`providers.twilio_wa.${setting}`)
  })
})

/** A status callback as Twilio posts it for a WhatsApp message, signed with Twilio's own library. */
async function callback(h: Harness, url: string, status: string, extra: Record<string, string> = {}) {
  const params: Record<string, string> = {
    AccountSid: SID,
    MessageSid: 'SM0123',
    MessageStatus: status,
    From: 'whatsapp:+15005550006',
    To: 'whatsapp:+5511987654321',
    ChannelPrefix: 'whatsapp',
    ApiVersion: '2010-04-01',
    ...extra,
  }
  const signature = twilio.getExpectedTwilioSignature(TOKEN, url, params)
  const res = await h.server.http.handle(
    new Request(`http://127.0.0.1:8080${url.slice(PUBLIC.length)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
      body: new URLSearchParams(params).toString(),
    }),
  )
  return res.status
}

describe('status callbacks', () => {
  test('`read` counts as delivered, once', async () => {
    const { h, stub } = await setup()
    const r = await h.send({ channel: 'whatsapp', recipient: '+5511987654321' })
    await h.server.storage.settled()
    const url = new URLSearchParams(form(stub)).get('StatusCallback')!
    expect(await callback(h, url, 'read')).toBe(200)
    expect(await callback(h, url, 'delivered')).toBe(200)
    const [row] = await h.sql('SELECT delivery FROM verifications WHERE id = $1', [r.json.verification_id])
    expect(row!.delivery).toBe('delivered')
    expect(await eventBodies(h, 'verification.delivered')).toHaveLength(1)
  })

  test("`undelivered` keeps Twilio's ErrorCode and its title", async () => {
    const { h, stub } = await setup()
    const r = await h.send({ channel: 'whatsapp', recipient: '+5511987654321' })
    await h.server.storage.settled()
    const url = new URLSearchParams(form(stub)).get('StatusCallback')!
    expect(await callback(h, url, 'undelivered', { ErrorCode: '63024' })).toBe(200)
    const s = await h.call(`/api/v1/verifications/${r.json.verification_id}`, undefined, { method: 'GET', headers: {} })
    expect(s.json.delivery).toMatchObject({ status: 'undelivered', error: { code: '63024', title: 'Invalid message recipient' } })
  })
})

describe('the config', () => {
  const problemsOf = (table: Record<string, unknown>, channels: Record<string, string[]>): string[] => {
    try {
      resolveConfig({ providers: { t: table }, channels }, 'test', { TWILIO_AUTH_TOKEN: TOKEN })
      return []
    } catch (err) {
      if (err instanceof ConfigError) return err.problems
      throw err
    }
  }
  const base = { type: 'twilio', account_sid: SID, auth_token_env: 'TWILIO_AUTH_TOKEN' }

  test('for WhatsApp only: whatsapp_from and whatsapp_content_sid are required, from is not', () => {
    expect(problemsOf(base, { whatsapp: ['t'] })).toEqual([
      'providers.t.whatsapp_from is missing: this provider sends WhatsApp: your WhatsApp sender registered with Twilio, in E.164 form such as "+15005550006"',
      'providers.t.whatsapp_content_sid is missing: this provider sends WhatsApp: the SID of an approved whatsapp/authentication Content template, "HX" and 32 hex digits',
    ])
    expect(problemsOf({ ...base, whatsapp_from: '+15005550006', whatsapp_content_sid: CONTENT_SID }, { whatsapp: ['t'] })).toEqual([])
  })

  test('for sms and WhatsApp: from too; wrong forms are named', () => {
    expect(problemsOf({ ...base, whatsapp_from: 'whatsapp:+15005550006', whatsapp_content_sid: 'HX12' }, { sms: ['t'], whatsapp: ['t'] })).toEqual([
      'providers.t.from is missing: a Twilio number in E.164 form such as "+15005550006", or an alphanumeric sender ID',
      'providers.t.whatsapp_from must be an E.164 number such as "+15005550006" (without "whatsapp:")',
      'providers.t.whatsapp_content_sid must be "HX" followed by 32 hex digits',
    ])
  })
})
