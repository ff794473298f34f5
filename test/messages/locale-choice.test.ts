/**
 * How a text is chosen (docs/messages.md#how-a-text-is-chosen): every link of
 * the chain (request, account, country, default), the caller's own message and
 * subject over all of them, the spec's English out of the box, and the exact
 * 400s of the new fields.
 */
import { describe, expect, test } from 'bun:test'
import { harnessPerTest, type Harness } from '../kit/harness.ts'

const harness = harnessPerTest()
/** The per-recipient limits out of the way: these tests send many codes to one number. */
const LOOSE = { recipient_per_minute: 100, recipient_per_hour: 100, recipient_per_day: 100 }
const start = (o: { credits?: number; config?: Record<string, any> } = {}) => harness({ ...o, config: { ...o.config, limits: LOOSE } })
// Numbers of countries the country table maps (MX -> es, JP -> ja) and of one it does not (US).
const MX = '+525512345678'
const JP = '+81312345678'
const US = '+14155550123'

const last = (h: Harness) => h.delivery.sent.at(-1)!
const sms = async (h: Harness, body: Record<string, unknown>) => {
  const r = await h.send({ channel: 'sms', code: '4821', ...body })
  expect(r.status).toBe(200)
  return last(h)
}

describe('out of the box', () => {
  test("every channel gets the spec's English text and subject, in 'en', with the code beside it", async () => {
    const h = await start({ credits: 10 })
    expect(await sms(h, { recipient: MX })).toMatchObject({
      text: 'Your verification code is: 4821',
      subject: 'Your Verification Code',
      locale: 'en',
      code: '4821',
    })
    await h.send({ channel: 'email', recipient: 'ann@example.com', code: '4821' })
    expect(last(h)).toMatchObject({ text: 'Your verification code is: 4821', subject: 'Your Verification Code', locale: 'en' })
    await h.send({ channel: 'voice', recipient: JP, code: '4821' })
    expect(last(h)).toMatchObject({ text: 'Your verification code is: 4, 8, 2, 1', locale: 'en', code: '4821' })
  })
})

describe('the chain, link by link', () => {
  test('default_locale decides when nothing else does', async () => {
    const h = await start({ credits: 10, config: { messages: { default_locale: 'fr' } } })
    expect(await sms(h, { recipient: MX })).toMatchObject({ text: '4821 est votre code de vérification', locale: 'fr' })
  })

  test("the number's country, when locale_from_country is on, over default_locale; a country of no table entry falls through", async () => {
    const h = await start({ credits: 10, config: { messages: { default_locale: 'fr', locale_from_country: true } } })
    expect(await sms(h, { recipient: MX })).toMatchObject({ text: '4821 es tu clave de acceso', locale: 'es' })
    expect(await sms(h, { recipient: US })).toMatchObject({ locale: 'fr' })
    // Email has no country: the default.
    await h.send({ channel: 'email', recipient: 'ann@example.com', code: '4821' })
    expect(last(h)).toMatchObject({ text: 'Votre code de vérification est 4821', subject: 'Votre code de vérification', locale: 'fr' })
  })

  test('locale_from_country off (the default): the country decides nothing', async () => {
    const h = await start({ credits: 10, config: { messages: { default_locale: 'fr' } } })
    expect(await sms(h, { recipient: JP })).toMatchObject({ locale: 'fr' })
  })

  test("the account's locale over the country and the default", async () => {
    const h = await start({ credits: 10, config: { messages: { default_locale: 'fr', locale_from_country: true } } })
    await h.server.admin.setMessaging('default', { locale: 'de' })
    expect(await sms(h, { recipient: MX })).toMatchObject({ text: '4821 ist Ihr Bestätigungscode', locale: 'de' })
    await h.server.admin.setMessaging('default', { locale: null })
    expect(await sms(h, { recipient: MX })).toMatchObject({ locale: 'es' })
  })

  test("the request's locale over the account's; a regional tag uses its language; case does not matter", async () => {
    const h = await start({ credits: 10, config: { messages: { locale_from_country: true } } })
    await h.server.admin.setMessaging('default', { locale: 'de' })
    expect(await sms(h, { recipient: MX, locale: 'it' })).toMatchObject({ text: '4821 è il tuo codice di verifica', locale: 'it' })
    expect(await sms(h, { recipient: MX, locale: 'es-MX' })).toMatchObject({ locale: 'es' })
    expect(await sms(h, { recipient: MX, locale: 'PT-br' })).toMatchObject({ text: '4821 é seu código', locale: 'pt-BR' })
    expect(await sms(h, { recipient: MX, locale: 'zh-Hant' })).toMatchObject({ locale: 'zh-TW' })
  })

  test('an account language the texts no longer have is skipped (the next link decides)', async () => {
    const h = await start({ credits: 10, config: { messages: { default_locale: 'fr' } } })
    await h.sql("UPDATE accounts SET locale = 'xx' WHERE name = 'default'")
    expect(await sms(h, { recipient: MX })).toMatchObject({ locale: 'fr' })
  })

  test("the caller's message and subject win over every link; the chosen language still rides along", async () => {
    const h = await start({ credits: 10, config: { messages: { default_locale: 'fr' } } })
    await h.server.admin.setMessaging('default', { locale: 'de' })
    expect(await sms(h, { recipient: MX, locale: 'es', message: 'Code {code} for {app}' })).toMatchObject({ text: 'Code 4821 for {app}', locale: 'es' })
    await h.send({ channel: 'email', recipient: 'ann@example.com', code: '4821', subject: 'Mine' })
    expect(last(h)).toMatchObject({ text: 'Ihr Bestätigungscode lautet 4821', subject: 'Mine', locale: 'de' })
  })
})

describe('operator templates', () => {
  test('override a built-in per channel; fill {app} and {minutes}; a new language becomes one locale accepts', async () => {
    const h = await start({
      credits: 10,
      config: {
        messages: {
          templates: {
            sms: { es: '{code} es tu código de {app} ({minutes} min)', ca: '{code} és el teu codi' },
            subject: { es: 'Código de {app}' },
          },
        },
      },
    })
    expect(await sms(h, { recipient: MX, locale: 'es', expires_in: 61 })).toMatchObject({ text: '4821 es tu código de default (2 min)' })
    await h.send({ channel: 'email', recipient: 'ann@example.com', code: '4821', locale: 'es' })
    // The body has no template of its own: the built-in Spanish one.
    expect(last(h)).toMatchObject({ text: 'Tu código de verificación es: 4821', subject: 'Código de default' })
    expect(await sms(h, { recipient: MX, locale: 'ca' })).toMatchObject({ text: '4821 és el teu codi', locale: 'ca' })
    // Catalan has no voice text: the default language's.
    await h.send({ channel: 'voice', recipient: MX, code: '4821', locale: 'ca' })
    expect(last(h)).toMatchObject({ text: 'Your verification code is: 4, 8, 2, 1', locale: 'ca' })
  })
})

describe('400s of the new fields, exact', () => {
  test.each([
    ['an unknown language', { locale: 'xx' }, 'locale must be a supported language tag'],
    ['a malformed tag', { locale: 'e s' }, 'locale must be a supported language tag'],
    ['a wrong type', { locale: 7 }, 'locale must be a supported language tag'],
    ['null', { locale: null }, 'locale must be a supported language tag'],
    ['an app_hash of 10 characters', { app_hash: 'FA+9qCX9VS' }, 'app_hash must be 11 characters of base64'],
    ['an app_hash with a character outside base64', { app_hash: 'FA+9qCX9VS-' }, 'app_hash must be 11 characters of base64'],
    ['an app_hash of the wrong type', { app_hash: 12345678901 }, 'app_hash must be 11 characters of base64'],
  ])('%s', async (_what, field, error) => {
    const h = await start({ credits: 10 })
    const r = await h.send({ channel: 'sms', recipient: US, ...field })
    expect(r.status).toBe(400)
    expect(r.json.error).toBe(error)
    expect(h.delivery.sent).toHaveLength(0)
  })

  test('the fields before them are reported first (ip, then locale, then app_hash)', async () => {
    const h = await start({ credits: 10 })
    expect((await h.send({ channel: 'sms', recipient: US, ip: 'x', locale: 'xx' })).json.error).toBe('ip must be a valid IPv4 or IPv6 address')
    expect((await h.send({ channel: 'sms', recipient: US, locale: 'xx', app_hash: 'x' })).json.error).toBe('locale must be a supported language tag')
  })
})
