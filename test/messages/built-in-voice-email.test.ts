/**
 * Every built-in language (docs/messages.md#built-in-languages) on the other
 * two channels, through the API and the real providers: the call as Twilio
 * receives it (TwiML byte for byte: the words said as written, the code digit
 * by digit with pauses, in the vendor's name for the language, all said twice;
 * docs/messages.md#voice), a few as Vonage receives them (the NCCO), and the
 * e-mail as a real SMTP server on loopback receives it (subject, plain part,
 * the HTML part's language and direction, Content-Language). The expected
 * texts are written out here on purpose, not derived from the table under test.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import PostalMime from 'postal-mime'
import { BUILT_IN_TEXTS } from '../../src/otp/messages/built-in.ts'
import { createHarness, type Harness } from '../kit/harness.ts'
import { CA_FILE, decodeHeader, parseRaw, type SmtpStub, startSmtpStub } from '../kit/smtp-stub.ts'
import { startVendorStub, type VendorStub } from '../kit/vendor-stub.ts'

const CODE = '90817263'
const PHONE = '+14155550123'
const LOOSE = { recipient_per_minute: 1000, recipient_per_hour: 1000, recipient_per_day: 1000 }

interface Expected {
  /** Twilio's `<Say language>` for the locale; undefined: Twilio lacks it, the call names no language (its default voice). */
  twilio: string | undefined
  /** The voice text's words before and after the code, trimmed ('' for none). */
  voice: [before: string, after: string]
  subject: string
  /** The e-mail's plain text with the code. */
  email: string
}

const EXPECTED: Record<string, Expected> = {
  en: { twilio: 'en-US', voice: ['Your verification code is:', ''], subject: 'Your Verification Code', email: `Your verification code is: ${CODE}` },
  es: { twilio: 'es-ES', voice: ['Tu clave de acceso es', ''], subject: 'Tu código de verificación', email: `Tu código de verificación es: ${CODE}` },
  fr: {
    twilio: 'fr-FR',
    voice: ['Votre code de vérification est', ''],
    subject: 'Votre code de vérification',
    email: `Votre code de vérification est ${CODE}`,
  },
  de: { twilio: 'de-DE', voice: ['Ihr Bestätigungscode lautet', ''], subject: 'Ihr Bestätigungscode', email: `Ihr Bestätigungscode lautet ${CODE}` },
  it: { twilio: 'it-IT', voice: ['Il tuo codice di verifica è', ''], subject: 'Il tuo codice di verifica', email: `Il tuo codice di verifica è ${CODE}` },
  pt: { twilio: 'pt-PT', voice: ['O seu código é', ''], subject: 'O seu código de verificação', email: `O seu código de verificação é: ${CODE}` },
  'pt-BR': { twilio: 'pt-BR', voice: ['Seu código é', ''], subject: 'Seu código de verificação', email: `Seu código de verificação é: ${CODE}` },
  nl: { twilio: 'nl-NL', voice: ['Je verificatiecode is', ''], subject: 'Je verificatiecode', email: `Je verificatiecode is ${CODE}` },
  sv: { twilio: 'sv-SE', voice: ['Din verifieringskod är', ''], subject: 'Din verifieringskod', email: `Din verifieringskod är ${CODE}` },
  da: { twilio: 'da-DK', voice: ['Din bekræftelseskode er', ''], subject: 'Din bekræftelseskode', email: `Din bekræftelseskode er ${CODE}` },
  nb: { twilio: 'nb-NO', voice: ['Din bekreftelseskode er', ''], subject: 'Din bekreftelseskode', email: `Din bekreftelseskode er ${CODE}` },
  fi: { twilio: 'fi-FI', voice: ['Vahvistuskoodisi on', ''], subject: 'Vahvistuskoodisi', email: `Vahvistuskoodisi on ${CODE}` },
  pl: { twilio: 'pl-PL', voice: ['Twój kod weryfikacyjny to', ''], subject: 'Twój kod weryfikacyjny', email: `Twój kod weryfikacyjny to ${CODE}` },
  cs: { twilio: 'cs-CZ', voice: ['Váš ověřovací kód je', ''], subject: 'Váš ověřovací kód', email: `Váš ověřovací kód je ${CODE}` },
  ro: { twilio: 'ro-RO', voice: ['Codul tău de verificare este', ''], subject: 'Codul tău de verificare', email: `Codul tău de verificare este ${CODE}` },
  hu: { twilio: 'hu-HU', voice: ['Az Ön ellenőrző kódja:', ''], subject: 'Az Ön ellenőrző kódja', email: `Az Ön ellenőrző kódja: ${CODE}` },
  tr: { twilio: 'tr-TR', voice: ['Doğrulama kodunuz:', ''], subject: 'Doğrulama kodunuz', email: `Doğrulama kodunuz: ${CODE}` },
  id: { twilio: 'id-ID', voice: ['Kode verifikasi Anda adalah', ''], subject: 'Kode verifikasi Anda', email: `Kode verifikasi Anda adalah ${CODE}` },
  ms: { twilio: 'ms-MY', voice: ['Kod pengesahan anda ialah', ''], subject: 'Kod pengesahan anda', email: `Kod pengesahan anda ialah ${CODE}` },
  sw: {
    twilio: undefined,
    voice: ['Nambari yako ya uthibitisho ni', ''],
    subject: 'Nambari yako ya uthibitisho',
    email: `Nambari yako ya uthibitisho ni ${CODE}`,
  },
  vi: { twilio: 'vi-VN', voice: ['Mã xác minh của bạn là', ''], subject: 'Mã xác minh của bạn', email: `Mã xác minh của bạn là ${CODE}` },
  ru: { twilio: 'ru-RU', voice: ['Ваш код подтверждения:', ''], subject: 'Ваш код подтверждения', email: `Ваш код подтверждения: ${CODE}` },
  uk: { twilio: 'uk-UA', voice: ['Ваш код підтвердження:', ''], subject: 'Ваш код підтвердження', email: `Ваш код підтвердження: ${CODE}` },
  bg: { twilio: 'bg-BG', voice: ['Вашият код за потвърждение е', ''], subject: 'Вашият код за потвърждение', email: `Вашият код за потвърждение е ${CODE}` },
  el: { twilio: 'el-GR', voice: ['Ο κωδικός επαλήθευσης είναι', ''], subject: 'Κωδικός επαλήθευσης', email: `Ο κωδικός επαλήθευσης είναι ${CODE}` },
  ar: { twilio: 'ar-XA', voice: ['رمز التحقق الخاص بك هو', ''], subject: 'رمز التحقق الخاص بك', email: `رمز التحقق الخاص بك هو ${CODE}` },
  he: { twilio: 'he-IL', voice: ['קוד האימות שלך הוא', ''], subject: 'קוד האימות שלך', email: `קוד האימות שלך הוא ${CODE}` },
  hi: { twilio: 'hi-IN', voice: ['आपका सत्यापन कोड', 'है'], subject: 'आपका सत्यापन कोड', email: `आपका सत्यापन कोड ${CODE} है` },
  ja: { twilio: 'ja-JP', voice: ['認証コードは', 'です'], subject: '認証コード', email: `認証コード: ${CODE}` },
  zh: { twilio: 'cmn-CN', voice: ['您的验证码是', ''], subject: '您的验证码', email: `您的验证码是 ${CODE}` },
  'zh-TW': { twilio: 'cmn-TW', voice: ['您的驗證碼是', ''], subject: '您的驗證碼', email: `您的驗證碼是 ${CODE}` },
  ko: { twilio: 'ko-KR', voice: ['인증번호는', '입니다'], subject: '인증번호', email: `인증번호: ${CODE}` },
  th: { twilio: 'th-TH', voice: ['รหัสยืนยันของคุณคือ', ''], subject: 'รหัสยืนยันของคุณ', email: `รหัสยืนยันของคุณคือ ${CODE}` },
}

const RTL = new Set(['ar', 'he'])
const LOCALES = Object.keys(BUILT_IN_TEXTS)

test('every built-in language has its expected voice and e-mail here', () => {
  expect(LOCALES.length).toBeGreaterThanOrEqual(20)
  expect([...LOCALES].sort()).toEqual(Object.keys(EXPECTED).sort())
})

const SID = 'AC' + '0123456789abcdef'.repeat(2)
const SMTP_PASSWORD = 's3cret-smtp-password'
let twilio: VendorStub
let smtp: SmtpStub
let h: Harness
beforeAll(async () => {
  twilio = startVendorStub((r) =>
    Response.json(r.path.endsWith('/Calls.json') ? { sid: 'CA1', status: 'queued' } : { sid: 'SM1', status: 'queued' }, { status: 201 }),
  )
  smtp = await startSmtpStub()
  h = await createHarness({
    credits: 1000,
    configuredDelivery: true,
    env: { TWILIO_AUTH_TOKEN: 'twilio-token-0123456789', OTPD_SMTP_PASSWORD: SMTP_PASSWORD },
    config: {
      providers: {
        tw: { type: 'twilio', account_sid: SID, auth_token_env: 'TWILIO_AUTH_TOKEN', from: '+15005550006', base_url: twilio.url },
        mail: {
          type: 'smtp',
          host: 'localhost',
          port: smtp.port,
          security: 'starttls',
          username: 'otpd',
          password_env: 'OTPD_SMTP_PASSWORD',
          from: 'Acme <no-reply@example.com>',
          ca_file: CA_FILE,
        },
      },
      channels: { sms: ['tw'], voice: ['tw'], email: ['mail'] },
      limits: LOOSE,
    },
  })
})
afterAll(async () => {
  h.close()
  twilio.close()
  await smtp.close()
})

describe('voice through the Twilio stub', () => {
  test.each(LOCALES)('%s: the exact TwiML: the words as written, the code digit by digit with pauses, in its language, said twice', async (locale) => {
    const { twilio: language, voice } = EXPECTED[locale]!
    const before = twilio.requests.length
    const sent = await h.send({ channel: 'voice', recipient: PHONE, locale, code: CODE })
    expect(sent.status).toBe(200)
    expect(twilio.requests).toHaveLength(before + 1)
    const r = twilio.requests.at(-1)!
    expect([r.method, r.path]).toEqual(['POST', `/2010-04-01/Accounts/${SID}/Calls.json`])
    const form = Object.fromEntries(new URLSearchParams(r.body))
    expect(Object.keys(form)).toEqual(['To', 'From', 'Twiml'])
    const say = (t: string) => (language === undefined ? `<Say>${t}</Say>` : `<Say language="${language}">${t}</Say>`)
    const pause = '<Pause length="1"/>'
    const once = [say(voice[0]), ...CODE.split('').map(say), ...(voice[1] === '' ? [] : [say(voice[1])])].join(pause)
    expect(form.Twiml).toBe(`<Response>${once}${pause}${once}</Response>`)
    // The form's bytes: UTF-8, percent-encoded, spaces as "+".
    expect(r.body).toBe(`To=%2B14155550123&From=%2B15005550006&Twiml=${encodeURIComponent(form.Twiml!).replaceAll('%20', '+')}`)
  })
})

describe('email through a real SMTP server on loopback', () => {
  test.each(LOCALES)('%s: the subject, the plain part, the HTML part in its language and direction, Content-Language', async (locale) => {
    const { subject, email } = EXPECTED[locale]!
    const before = smtp.received.length
    const sent = await h.send({ channel: 'email', recipient: 'ann@example.org', locale, code: CODE })
    expect(sent.status).toBe(200)
    expect(smtp.received).toHaveLength(before + 1)
    const raw = smtp.received.at(-1)!.raw
    const headers = Object.fromEntries(parseRaw(raw).headers)
    expect(headers['Content-Language']).toBe(locale)
    expect(decodeHeader(headers.Subject!)).toBe(subject)
    const parsed = await PostalMime.parse(raw)
    expect(parsed.subject).toBe(subject)
    // postal-mime keeps the line break before the boundary (RFC 2046 gives it to the boundary).
    expect(parsed.text).toBe(`${email}\n`)
    const html = parsed.html!
    expect(html).toStartWith(`<!DOCTYPE html>\n<html lang="${locale}" dir="${RTL.has(locale) ? 'rtl' : 'ltr'}">\n`)
    expect(html).toContain(`<title>${subject}</title>`)
    expect(html).toContain(`;">${CODE}</p>`)
    expect(parsed.headers.find((x) => x.key === 'content-language')?.value).toBe(locale)
  })
})

describe('voice through the Vonage stub', () => {
  const KEY_FILE = join(import.meta.dir, '..', 'kit', 'fixtures', 'tls', 'vonage-app.key')
  let vonage: VendorStub
  let hv: Harness
  beforeAll(async () => {
    vonage = startVendorStub(() => Response.json({ uuid: 'u', status: 'started' }, { status: 201 }))
    hv = await createHarness({
      credits: 100,
      configuredDelivery: true,
      env: { VONAGE_API_SECRET: 'vonage-api-secret-xyz' },
      config: {
        providers: {
          vg: {
            type: 'vonage',
            api_key: 'abcd1234',
            api_secret_env: 'VONAGE_API_SECRET',
            application_id: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee',
            private_key_file: KEY_FILE,
            from: 'Acme',
            voice_from: '+14155550100',
            base_url: vonage.url,
            voice_base_url: vonage.url,
          },
        },
        channels: { voice: ['vg'] },
        limits: LOOSE,
      },
    })
  })
  afterAll(() => {
    hv.close()
    vonage.close()
  })

  // Vonage's language codes, written out (ms: Vonage lacks Malay, so the call names none).
  const VONAGE: [locale: string, language: string | undefined][] = [
    ['pt-BR', 'pt-BR'],
    ['ar', 'ar'],
    ['ko', 'ko-KR'],
    ['ms', undefined],
  ]
  test.each(VONAGE)('%s: the talk action: SSML words, digits with breaks, language %p, read twice', async (locale, language) => {
    const { voice } = EXPECTED[locale]!
    const sent = await hv.send({ channel: 'voice', recipient: PHONE, locale, code: CODE })
    expect(sent.status).toBe(200)
    const r = vonage.requests.at(-1)!
    expect([r.method, r.path]).toEqual(['POST', '/v1/calls'])
    const digits = CODE.split('').join("<break time='500ms'/>")
    const ssml = [voice[0], digits, ...(voice[1] === '' ? [] : [voice[1]])].join("<break time='1s'/>")
    expect(JSON.parse(r.body).ncco).toEqual([
      { action: 'talk', text: `<speak>${ssml}<break time='1s'/></speak>`, ...(language === undefined ? {} : { language }), loop: 2 },
    ])
  })
})
