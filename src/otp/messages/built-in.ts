/**
 * The built-in texts (docs/messages.md#built-in-languages), per language: SMS,
 * voice, and email subject and body, each with `{code}`. English is the spec's,
 * word for word, so out of the box nothing changes for a client. SMS texts put
 * the code first where the language allows and keep to GSM-7 where it can be
 * written correctly with it; the others are UCS-2 and fit one segment with an
 * 8-digit code and an autofill line (test/messages/built-in.test.ts).
 */

export interface Texts {
  sms: string
  voice: string
  subject: string
  email: string
}

/** The email body says what the voice says, unless given. */
const t = (sms: string, voice: string, subject: string, email = voice): Texts => ({ sms, voice, subject, email })

/** Keyed by canonical BCP 47 tag. */
export const BUILT_IN_TEXTS: Record<string, Texts> = {
  en: {
    sms: 'Your verification code is: {code}',
    voice: 'Your verification code is: {code}',
    subject: 'Your Verification Code',
    email: 'Your verification code is: {code}',
  },
  es: t('{code} es tu clave de acceso', 'Tu clave de acceso es {code}', 'Tu código de verificación', 'Tu código de verificación es: {code}'),
  fr: t('{code} est votre code de vérification', 'Votre code de vérification est {code}', 'Votre code de vérification'),
  de: t('{code} ist Ihr Bestätigungscode', 'Ihr Bestätigungscode lautet {code}', 'Ihr Bestätigungscode'),
  it: t('{code} è il tuo codice di verifica', 'Il tuo codice di verifica è {code}', 'Il tuo codice di verifica'),
  pt: t('{code} é o seu código', 'O seu código é {code}', 'O seu código de verificação', 'O seu código de verificação é: {code}'),
  'pt-BR': t('{code} é seu código', 'Seu código é {code}', 'Seu código de verificação', 'Seu código de verificação é: {code}'),
  nl: t('{code} is je verificatiecode', 'Je verificatiecode is {code}', 'Je verificatiecode'),
  sv: t('{code} är din verifieringskod', 'Din verifieringskod är {code}', 'Din verifieringskod'),
  da: t('{code} er din bekræftelseskode', 'Din bekræftelseskode er {code}', 'Din bekræftelseskode'),
  nb: t('{code} er din bekreftelseskode', 'Din bekreftelseskode er {code}', 'Din bekreftelseskode'),
  fi: t('{code} on vahvistuskoodisi', 'Vahvistuskoodisi on {code}', 'Vahvistuskoodisi'),
  pl: t('{code} to kod weryfikacyjny', 'Twój kod weryfikacyjny to {code}', 'Twój kod weryfikacyjny'),
  cs: t('{code} je ověřovací kód', 'Váš ověřovací kód je {code}', 'Váš ověřovací kód'),
  ro: t('{code} este codul de verificare', 'Codul tău de verificare este {code}', 'Codul tău de verificare'),
  hu: t('{code} az ellenőrző kód', 'Az Ön ellenőrző kódja: {code}', 'Az Ön ellenőrző kódja'),
  tr: t('{code} doğrulama kodunuzdur', 'Doğrulama kodunuz: {code}', 'Doğrulama kodunuz'),
  id: t('{code} adalah kode verifikasi Anda', 'Kode verifikasi Anda adalah {code}', 'Kode verifikasi Anda'),
  ms: t('{code} ialah kod pengesahan anda', 'Kod pengesahan anda ialah {code}', 'Kod pengesahan anda'),
  sw: t('{code} ni nambari yako ya uthibitisho', 'Nambari yako ya uthibitisho ni {code}', 'Nambari yako ya uthibitisho'),
  vi: t('{code} là mã xác minh', 'Mã xác minh của bạn là {code}', 'Mã xác minh của bạn'),
  ru: t('{code} — код подтверждения', 'Ваш код подтверждения: {code}', 'Ваш код подтверждения'),
  uk: t('{code} — код підтвердження', 'Ваш код підтвердження: {code}', 'Ваш код підтвердження'),
  bg: t('{code} е вашият код', 'Вашият код за потвърждение е {code}', 'Вашият код за потвърждение'),
  el: t('{code} είναι ο κωδικός σας', 'Ο κωδικός επαλήθευσης είναι {code}', 'Κωδικός επαλήθευσης'),
  ar: t('{code} هو رمز التحقق الخاص بك', 'رمز التحقق الخاص بك هو {code}', 'رمز التحقق الخاص بك'),
  he: t('{code} הוא קוד האימות שלך', 'קוד האימות שלך הוא {code}', 'קוד האימות שלך'),
  hi: t('{code} आपका सत्यापन कोड है', 'आपका सत्यापन कोड {code} है', 'आपका सत्यापन कोड'),
  ja: t('{code} は認証コードです', '認証コードは {code} です', '認証コード', '認証コード: {code}'),
  zh: t('{code} 是您的验证码', '您的验证码是 {code}', '您的验证码'),
  'zh-TW': t('{code} 是您的驗證碼', '您的驗證碼是 {code}', '您的驗證碼'),
  ko: t('인증번호: {code}', '인증번호는 {code}입니다', '인증번호', '인증번호: {code}'),
  th: t('{code} คือรหัสยืนยันของคุณ', 'รหัสยืนยันของคุณคือ {code}', 'รหัสยืนยันของคุณ'),
}

/**
 * The language of a number's country, for `[messages] locale_from_country`:
 * countries with one clear national language of the table above. A country
 * not listed (several languages, or English by default) falls through to
 * `default_locale`.
 */
export const COUNTRY_LOCALES: Record<string, string> = {
  ...all('es', 'ES MX AR CO CL PE VE EC GT CU BO DO HN PY SV NI CR PA UY PR'),
  ...all('fr', 'FR MC SN CI ML BF NE GN'),
  ...all('de', 'DE AT LI'),
  ...all('it', 'IT SM VA'),
  ...all('pt', 'PT AO MZ CV'),
  ...all('pt-BR', 'BR'),
  ...all('nl', 'NL SR'),
  ...all('sv', 'SE'),
  ...all('da', 'DK'),
  ...all('nb', 'NO'),
  ...all('fi', 'FI'),
  ...all('pl', 'PL'),
  ...all('cs', 'CZ'),
  ...all('ro', 'RO MD'),
  ...all('hu', 'HU'),
  ...all('tr', 'TR'),
  ...all('id', 'ID'),
  ...all('ms', 'MY BN'),
  ...all('sw', 'TZ'),
  ...all('vi', 'VN'),
  ...all('ru', 'RU BY KZ KG'),
  ...all('uk', 'UA'),
  ...all('bg', 'BG'),
  ...all('el', 'GR CY'),
  ...all('ar', 'SA AE EG IQ JO KW LB LY MA OM QA SY TN YE BH DZ SD PS'),
  ...all('he', 'IL'),
  ...all('ja', 'JP'),
  ...all('zh', 'CN SG'),
  ...all('zh-TW', 'TW HK MO'),
  ...all('ko', 'KR'),
  ...all('th', 'TH'),
}

function all(locale: string, countries: string): Record<string, string> {
  return Object.fromEntries(countries.split(' ').map((c) => [c, locale]))
}
