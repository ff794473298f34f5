/**
 * Every built-in language (docs/messages.md#built-in-languages): its texts
 * have their placeholder, and its SMS, with an 8-digit code and the autofill
 * line, goes through the Twilio stub byte for byte, in the documented
 * encoding, as one segment; the docs table says the same figures.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { smsSize } from '../../src/lib/sms-encoding.ts'
import { BUILT_IN_TEXTS } from '../../src/otp/messages/built-in.ts'
import { TEXT_KINDS } from '../../src/otp/messages/template.ts'
import { createHarness, type Harness } from '../kit/harness.ts'
import { startVendorStub, type VendorStub } from '../kit/vendor-stub.ts'

const CODE = '12345678'
const AUTOFILL = `\n\n@example.com #${CODE}`

/** The SMS each language sends, written out here on purpose (not derived from the table under test). */
const EXPECTED_SMS: Record<string, [text: string, encoding: 'GSM-7' | 'UCS-2']> = {
  en: [`Your verification code is: ${CODE}`, 'GSM-7'],
  es: [`${CODE} es tu clave de acceso`, 'GSM-7'],
  fr: [`${CODE} est votre code de vérification`, 'GSM-7'],
  de: [`${CODE} ist Ihr Bestätigungscode`, 'GSM-7'],
  it: [`${CODE} è il tuo codice di verifica`, 'GSM-7'],
  pt: [`${CODE} é o seu código`, 'UCS-2'],
  'pt-BR': [`${CODE} é seu código`, 'UCS-2'],
  nl: [`${CODE} is je verificatiecode`, 'GSM-7'],
  sv: [`${CODE} är din verifieringskod`, 'GSM-7'],
  da: [`${CODE} er din bekræftelseskode`, 'GSM-7'],
  nb: [`${CODE} er din bekreftelseskode`, 'GSM-7'],
  fi: [`${CODE} on vahvistuskoodisi`, 'GSM-7'],
  pl: [`${CODE} to kod weryfikacyjny`, 'GSM-7'],
  cs: [`${CODE} je ověřovací kód`, 'UCS-2'],
  ro: [`${CODE} este codul de verificare`, 'GSM-7'],
  hu: [`${CODE} az ellenőrző kód`, 'UCS-2'],
  tr: [`${CODE} doğrulama kodunuzdur`, 'UCS-2'],
  id: [`${CODE} adalah kode verifikasi Anda`, 'GSM-7'],
  ms: [`${CODE} ialah kod pengesahan anda`, 'GSM-7'],
  sw: [`${CODE} ni nambari yako ya uthibitisho`, 'GSM-7'],
  vi: [`${CODE} là mã xác minh`, 'UCS-2'],
  ru: [`${CODE} — код подтверждения`, 'UCS-2'],
  uk: [`${CODE} — код підтвердження`, 'UCS-2'],
  bg: [`${CODE} е вашият код`, 'UCS-2'],
  el: [`${CODE} είναι ο κωδικός σας`, 'UCS-2'],
  ar: [`${CODE} هو رمز التحقق الخاص بك`, 'UCS-2'],
  he: [`${CODE} הוא קוד האימות שלך`, 'UCS-2'],
  hi: [`${CODE} आपका सत्यापन कोड है`, 'UCS-2'],
  ja: [`${CODE} は認証コードです`, 'UCS-2'],
  zh: [`${CODE} 是您的验证码`, 'UCS-2'],
  'zh-TW': [`${CODE} 是您的驗證碼`, 'UCS-2'],
  ko: [`인증번호: ${CODE}`, 'UCS-2'],
  th: [`${CODE} คือรหัสยืนยันของคุณ`, 'UCS-2'],
}

const LOCALES = Object.keys(BUILT_IN_TEXTS)

test('at least 20 built-in languages, each with its expected SMS here', () => {
  expect(LOCALES.length).toBeGreaterThanOrEqual(20)
  expect(LOCALES.sort()).toEqual(Object.keys(EXPECTED_SMS).sort())
})

test("English is the spec's text on every channel, and its subject", () => {
  expect(BUILT_IN_TEXTS.en).toEqual({
    sms: 'Your verification code is: {code}',
    voice: 'Your verification code is: {code}',
    email: 'Your verification code is: {code}',
    subject: 'Your Verification Code',
  })
})

describe.each(LOCALES)('%s', (locale) => {
  const texts = BUILT_IN_TEXTS[locale]!
  test('each text has {code} exactly once (the subject none), and no other placeholder', () => {
    for (const kind of TEXT_KINDS) {
      const want = kind === 'subject' ? 0 : 1
      expect({ kind, codes: texts[kind].split('{code}').length - 1 }).toEqual({ kind, codes: want })
      expect(texts[kind].replaceAll('{code}', '')).not.toMatch(/\{[a-z]+\}/)
    }
  })

  test('the SMS with an 8-digit code and the autofill line is one segment in the expected encoding', () => {
    const [text, encoding] = EXPECTED_SMS[locale]!
    expect(smsSize(text + AUTOFILL)).toMatchObject({ encoding, segments: 1 })
  })
})

describe('through the Twilio stub', () => {
  const SID = 'AC' + '0123456789abcdef'.repeat(2)
  let stub: VendorStub
  let h: Harness
  beforeAll(async () => {
    stub = startVendorStub(() => Response.json({ sid: 'SM1', status: 'queued' }, { status: 201 }))
    h = await createHarness({
      credits: 100,
      configuredDelivery: true,
      env: { TWILIO_AUTH_TOKEN: 'twilio-token-0123456789' },
      config: {
        providers: { tw: { type: 'twilio', account_sid: SID, auth_token_env: 'TWILIO_AUTH_TOKEN', from: '+15005550006', base_url: stub.url } },
        channels: { sms: ['tw'] },
        messages: { otp_domain: 'example.com' },
        limits: { recipient_per_minute: 1000, recipient_per_hour: 1000, recipient_per_day: 1000 },
      },
    })
  })
  afterAll(() => {
    h.close()
    stub.close()
  })

  test.each(LOCALES)('%s: the exact Body, and the encoding and segments recorded for the status', async (locale) => {
    const [text, encoding] = EXPECTED_SMS[locale]!
    const sent = await h.send({ channel: 'sms', recipient: '+14155550123', locale, code: CODE })
    expect(sent.status).toBe(200)
    const form = new URLSearchParams(stub.requests.at(-1)!.body)
    expect(form.get('Body')).toBe(text + AUTOFILL)
    // The form's bytes: UTF-8, percent-encoded, as Twilio documents.
    expect(stub.requests.at(-1)!.body).toContain(`Body=${encodeURIComponent(text + AUTOFILL).replaceAll('%20', '+')}`)
    // The answer does not wait for the record of `accepted` (docs/benchmarks.md): the status read does.
    await h.server.storage.settled()
    const status = await h.call(`/api/v1/verifications/${sent.json.verification_id}`, undefined, { method: 'GET' })
    expect(status.json.delivery).toMatchObject({ status: 'accepted', encoding, segments: 1 })
  })
})

test('docs/messages.md states each language, its encoding, length and domain headroom as computed', () => {
  const doc = readFileSync(join(import.meta.dir, '..', '..', 'docs', 'messages.md'), 'utf8')
  for (const locale of LOCALES) {
    const size = smsSize(EXPECTED_SMS[locale]![0])
    const headroom = (size.encoding === 'GSM-7' ? 160 : 70) - size.units - '\n\n@ #'.length - CODE.length
    const row = doc.split('\n').find((l) => l.startsWith(`| \`${locale}\` |`))
    expect({ locale, row: row?.replace(/^(\|[^|]*){3}/, '') }).toEqual({ locale, row: `| ${size.encoding} | ${size.units} | ${headroom} |` })
  }
})
