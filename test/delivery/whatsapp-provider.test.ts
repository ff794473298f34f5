/**
 * The `whatsapp` provider (Meta's WhatsApp Cloud API, docs/delivery.md#whatsapp)
 * through a local stub of the Graph API: the exact request of a send in each
 * of several languages, the language chosen and where it shows (status,
 * `verification.sent`), and each mapped error with what the client and the
 * operator then see (docs/delivery.md#whatsapp-errors).
 */
import { describe, expect, test } from 'bun:test'
import { resolveConfig } from '../../src/app/load-config.ts'
import { ConfigError } from '../../src/config/load.ts'
import { templateLanguage } from '../../src/delivery/template-language.ts'
import { closeAfterTest } from '../kit/cleanup.ts'
import { harnessPerTest, type Harness } from '../kit/harness.ts'
import { startVendorStub } from '../kit/vendor-stub.ts'
import { eventBodies, META_ENV, META_TOKEN, metaAccepted, metaError, metaProvider, metaSetup, PHONE_ID, WAMID } from '../kit/whatsapp.ts'

const start = harnessPerTest()

const status = async (h: Harness, id: string) => (await h.call(`/api/v1/verifications/${id}`, undefined, { method: 'GET', headers: {} })).json

describe('a send: the exact request, in the language nearest the send', () => {
  const cases: [locale: string, expected: string][] = [
    ['en', 'en_US'], // the language with the region the provider lists
    ['es', 'es'], // exact
    ['pt-BR', 'pt_BR'], // exact, as Meta spells it
    ['pt-PT', 'pt_BR'], // the same language, another region
    ['fr', 'en_US'], // not listed: the first
  ]
  test.each(cases)('locale %s -> template language %s', async (locale, expected) => {
    const { h, stub } = await metaSetup()
    const r = await h.send({ channel: 'whatsapp', recipient: '+5511987654321', locale, code: '482913' })
    expect(r.status).toBe(200)
    expect(stub.requests).toHaveLength(1)
    const req = stub.requests[0]!
    expect(req.method).toBe('POST')
    expect(req.path).toBe(`/v23.0/${PHONE_ID}/messages`)
    expect(req.headers.authorization).toBe(`Bearer ${META_TOKEN}`)
    expect(req.headers['content-type']).toBe('application/json')
    expect(req.body).toBe(
      JSON.stringify({
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: '5511987654321',
        type: 'template',
        template: {
          name: 'otp_code',
          language: { code: expected },
          components: [
            { type: 'body', parameters: [{ type: 'text', text: '482913' }] },
            { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '482913' }] },
          ],
        },
        biz_opaque_callback_data: r.json.verification_id,
      }),
    )
    await h.server.storage.settled()
    const s = await status(h, r.json.verification_id)
    expect(s.delivery).toMatchObject({ status: 'accepted', provider: 'meta', language: expected })
    const sent = await eventBodies(h, 'verification.sent')
    expect(sent.map((e) => e.data)).toEqual([expect.objectContaining({ provider: 'meta', language: expected })])
    const [row] = await h.sql('SELECT delivery_ref FROM verifications WHERE id = $1', [r.json.verification_id])
    expect(row!.delivery_ref).toBe(WAMID)
  })

  test('api_version and base_url are taken as configured', async () => {
    const stub = startVendorStub(() => metaAccepted())
    closeAfterTest(stub)
    const h = await start({
      credits: 1,
      configuredDelivery: true,
      env: META_ENV,
      config: { providers: { meta: metaProvider(`${stub.url}/graph/`, { api_version: 'v21.0' }) }, channels: { whatsapp: ['meta'] } },
    })
    expect((await h.send({ channel: 'whatsapp', recipient: '+14155550123' })).status).toBe(200)
    expect(stub.requests[0]!.path).toBe(`/graph/v21.0/${PHONE_ID}/messages`)
  })

  test('the resolution order itself', () => {
    expect(templateLanguage('pt-BR', ['pt_PT', 'pt_BR'])).toBe('pt_BR')
    expect(templateLanguage('pt', ['en', 'pt_PT', 'pt_BR'])).toBe('pt_PT')
    expect(templateLanguage('zh-Hant-HK', ['en', 'zh_HK'])).toBe('zh_HK')
    expect(templateLanguage('de', ['es', 'en_US'])).toBe('es')
  })
})

describe("Meta's errors, mapped (docs/delivery.md#whatsapp-errors)", () => {
  test('131026 (not on WhatsApp): final for the channel, no other WhatsApp provider tried; 500, refunded', async () => {
    const { h, stub, backup } = await metaSetup({ backup: true, answer: () => metaError(400, 131026, 'Message undeliverable.') })
    const r = await h.send({ channel: 'whatsapp', recipient: '+14155550123' })
    expect(r.status).toBe(500)
    expect(r.json.error).toBe('Failed to send verification')
    expect(stub.requests).toHaveLength(1)
    expect(backup.requests).toHaveLength(0)
    expect((await h.server.admin.balance()).balance).toBe(20)
    const log = h.logs.join('\n')
    expect(log).toContain('whatsapp answered 400 (error 131026')
    expect(log).toContain('so no other provider was tried')
    expect(log).not.toContain('4155550123')
  })

  test.each([
    [429, 130429, 'Rate limit hit'],
    [400, 131056, '(Business Account, Consumer Account) pair rate limit hit'],
    [400, 131048, 'Spam rate limit hit'],
    [500, 131000, 'Something went wrong'],
    [503, 131016, 'Service unavailable'],
    [503, 1, 'An unknown error occurred'],
  ])('%i %i (throttling, server error): the next provider takes it', async (httpStatus, code, message) => {
    const { h, stub, backup } = await metaSetup({ backup: true, answer: () => metaError(httpStatus, code, message) })
    const r = await h.send({ channel: 'whatsapp', recipient: '+14155550123' })
    expect(r.status).toBe(200)
    expect(stub.requests).toHaveLength(1)
    expect(backup.requests).toHaveLength(1)
    await h.server.storage.settled()
    expect((await status(h, r.json.verification_id)).delivery).toMatchObject({ status: 'accepted', provider: 'meta_backup' })
    expect(h.logs.find((l) => l.includes('provider failed: meta'))).toContain(`(error ${code}`)
  })

  test.each([
    [404, 132001, 'template', '(#132001) Template name does not exist in the translation', 'providers.meta.template and providers.meta.languages'],
    [401, 190, 'access_token_env', 'Error validating access token: Session has expired', 'providers.meta.access_token_env'],
    [400, 132015, 'template', '(#132015) Template is paused', 'providers.meta.template'],
    [400, 132000, 'template', '(#132000) Number of parameters does not match', 'providers.meta.template'],
    [400, 132012, 'template', '(#132012) Parameter format does not match', 'providers.meta.template'],
    [400, 132016, 'template', '(#132016) Template is disabled', 'providers.meta.template'],
    [401, 0, 'access_token_env', 'Invalid OAuth access token - Cannot parse access token', 'providers.meta.access_token_env'],
    [403, 10, 'access_token_env', '(#10) Application does not have permission for this action', 'providers.meta.access_token_env'],
    [400, 131030, 'phone_number_id', '(#131030) Recipient phone number not in allowed list', 'providers.meta.phone_number_id'],
  ])('%i %i: misconfigured: an error line naming %s, and the next provider is tried', async (httpStatus, code, setting, message, check) => {
    const { h, backup } = await metaSetup({ backup: true, answer: () => metaError(httpStatus, code, message) })
    const r = await h.send({ channel: 'whatsapp', recipient: '+14155550123' })
    expect(r.status).toBe(200)
    expect(backup.requests).toHaveLength(1)
    const line = JSON.parse(h.logs.find((l) => l.includes('provider misconfigured: meta'))!) as Record<string, string>
    expect(line.level).toBe('error')
    expect(line.setting).toBe(`providers.meta.${setting}`)
    expect(line.reason).toContain(`check ${check}`)
    expect(JSON.stringify(line)).not.toContain(message) // Meta's own text is not echoed
  })

  test('misconfigured with no other provider: 500 and refunded, the error line still names the setting', async () => {
    const { h } = await metaSetup({ answer: () => metaError(404, 132001, 'Template name does not exist in the translation') })
    const r = await h.send({ channel: 'whatsapp', recipient: '+14155550123' })
    expect(r.status).toBe(500)
    expect((await h.server.admin.balance()).balance).toBe(20)
    expect(h.logs.some((l) => l.includes('"setting":"providers.meta.template"'))).toBe(true)
  })

  test('a 200 without a message id is no acceptance', async () => {
    const { h } = await metaSetup({ answer: () => Response.json({ messaging_product: 'whatsapp' }) })
    expect((await h.send({ channel: 'whatsapp', recipient: '+14155550123' })).status).toBe(500)
  })
})

describe('the config', () => {
  const problemsOf = (raw: Record<string, unknown>): string[] => {
    try {
      resolveConfig(raw, 'test', META_ENV)
      return []
    } catch (err) {
      if (err instanceof ConfigError) return err.problems
      throw err
    }
  }
  const check = (opts: Record<string, unknown>, publicUrl = true) =>
    problemsOf({ server: publicUrl ? { public_url: 'https://otp.example.com' } : {}, providers: { meta: opts }, channels: { whatsapp: ['meta'] } })

  test('a complete table passes; each required key is named when missing', () => {
    expect(check(metaProvider('https://graph.facebook.com'))).toEqual([])
    expect(check({ type: 'whatsapp' }, false)).toEqual([
      `providers.meta.phone_number_id is missing: the WhatsApp Business phone number's id from WhatsApp Manager (API Setup), digits`,
      'providers.meta.access_token_env is missing: name the environment variable holding the access token, such as WHATSAPP_ACCESS_TOKEN',
      'providers.meta.template is missing: the name of the approved AUTHENTICATION template, such as "otp_code"',
      'providers.meta.languages is missing: the template\'s approved language codes, the default first, such as ["en_US", "es", "pt_BR"]',
    ])
  })

  test('receipts on: the app secret and the verify token are required', () => {
    const { app_secret_env: _a, verify_token_env: _v, ...rest } = metaProvider('https://graph.facebook.com')
    const problems = check(rest)
    expect(problems).toHaveLength(2)
    expect(problems[0]).toStartWith('providers.meta.app_secret_env is missing: server.public_url turns delivery receipts on')
    expect(problems[1]).toStartWith('providers.meta.verify_token_env is missing: server.public_url turns delivery receipts on')
  })

  test('wrong values are named', () => {
    expect(check(metaProvider('https://graph.facebook.com', { languages: ['en-US'] }))).toEqual([
      'providers.meta.languages has "en-US", which is not a WhatsApp language code such as "en_US" or "es"',
    ])
    expect(check(metaProvider('https://graph.facebook.com', { languages: [] }))).toEqual([
      'providers.meta.languages must be a non-empty list of strings (got [])',
    ])
    expect(check(metaProvider('https://graph.facebook.com', { phone_number_id: '+15550783881' }))).toEqual([
      'providers.meta.phone_number_id must be the phone number id (digits), not the phone number',
    ])
    expect(check(metaProvider('https://graph.facebook.com', { template: 'OTP Code' }))).toEqual([
      'providers.meta.template must be a template name: lower-case letters, digits and underscores',
    ])
    expect(check(metaProvider('https://graph.facebook.com', { api_version: '23' }))).toEqual([
      'providers.meta.api_version must be a Graph API version such as "v23.0"',
    ])
  })

  test('a whatsapp provider delivers only whatsapp', () => {
    const problems = problemsOf({ providers: { meta: metaProvider('https://graph.facebook.com') }, channels: { sms: ['meta'] } })
    expect(problems).toContain("channels.sms names provider 'meta', a 'whatsapp' provider, which cannot deliver sms")
  })
})
