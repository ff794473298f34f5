/**
 * What a call says, whatever the vendor (docs/messages.md#voice): the words of
 * the text as written, and the code apart, digit by digit, so that each vendor
 * can put a pause between the digits; and the vendor's name for the message's
 * language. The text arrives with the code already in it (read "1, 2, 3" for
 * voice, or as plain digits): the code is found in it, never guessed.
 */

export type VoicePart = { kind: 'words'; text: string } | { kind: 'code'; digits: string[] }

/** The text cut around each occurrence of the code; words trimmed, empty runs dropped. Without the code in the text: the words alone. */
export function voiceParts(text: string, code: string): VoicePart[] {
  const parts: VoicePart[] = []
  const words = (w: string) => {
    const t = w.trim()
    if (t !== '') parts.push({ kind: 'words', text: t })
  }
  if (!/^\d+$/.test(code)) {
    words(text)
    return parts
  }
  const spoken = code.split('').join(', ')
  // The spoken form first: "1, 2, 3" must not leave its commas as words. A run of more digits is not the code.
  const occurrence = new RegExp(`(?<!\\d)(?:${spoken}|${code})(?!\\d)`, 'g')
  let at = 0
  for (const m of text.matchAll(occurrence)) {
    words(text.slice(at, m.index))
    parts.push({ kind: 'code', digits: code.split('') })
    at = m.index + m[0].length
  }
  words(text.slice(at))
  return parts
}

export type VoiceVendor = 'twilio' | 'vonage'

/**
 * BCP 47 tag (lower case) -> each vendor's language code, as their
 * documentation lists them (Twilio `<Say language>`, Vonage talk `language`).
 * A vendor missing from an entry lacks that language or variant: the lookup
 * goes on to the shorter tag (`en-za` -> `en`), and with none left the vendor's
 * default voice (US English) speaks; docs/messages.md#voice lists the table.
 */
export const VOICE_LANGUAGES: Record<string, Partial<Record<VoiceVendor, string>>> = {
  en: { twilio: 'en-US', vonage: 'en-US' },
  'en-us': { twilio: 'en-US', vonage: 'en-US' },
  'en-gb': { twilio: 'en-GB', vonage: 'en-GB' },
  'en-au': { twilio: 'en-AU', vonage: 'en-AU' },
  'en-in': { twilio: 'en-IN', vonage: 'en-IN' },
  'en-za': { vonage: 'en-ZA' },
  es: { twilio: 'es-ES', vonage: 'es-ES' },
  'es-419': { twilio: 'es-MX', vonage: 'es-MX' },
  'es-mx': { twilio: 'es-MX', vonage: 'es-MX' },
  'es-us': { twilio: 'es-US', vonage: 'es-US' },
  pt: { twilio: 'pt-PT', vonage: 'pt-PT' },
  'pt-br': { twilio: 'pt-BR', vonage: 'pt-BR' },
  fr: { twilio: 'fr-FR', vonage: 'fr-FR' },
  'fr-ca': { twilio: 'fr-CA', vonage: 'fr-CA' },
  de: { twilio: 'de-DE', vonage: 'de-DE' },
  it: { twilio: 'it-IT', vonage: 'it-IT' },
  nl: { twilio: 'nl-NL', vonage: 'nl-NL' },
  pl: { twilio: 'pl-PL', vonage: 'pl-PL' },
  ru: { twilio: 'ru-RU', vonage: 'ru-RU' },
  uk: { twilio: 'uk-UA', vonage: 'uk-UA' },
  tr: { twilio: 'tr-TR', vonage: 'tr-TR' },
  ar: { twilio: 'ar-XA', vonage: 'ar' },
  he: { twilio: 'he-IL', vonage: 'he-IL' },
  hi: { twilio: 'hi-IN', vonage: 'hi-IN' },
  bn: { twilio: 'bn-IN', vonage: 'bn-IN' },
  ja: { twilio: 'ja-JP', vonage: 'ja-JP' },
  ko: { twilio: 'ko-KR', vonage: 'ko-KR' },
  zh: { twilio: 'cmn-CN', vonage: 'cmn-CN' },
  'zh-hant': { twilio: 'cmn-TW', vonage: 'cmn-TW' },
  'zh-tw': { twilio: 'cmn-TW', vonage: 'cmn-TW' },
  'zh-hk': { twilio: 'yue-HK', vonage: 'yue-CN' },
  id: { twilio: 'id-ID', vonage: 'id-ID' },
  ms: { twilio: 'ms-MY' },
  vi: { twilio: 'vi-VN', vonage: 'vi-VN' },
  th: { twilio: 'th-TH', vonage: 'th-TH' },
  fil: { twilio: 'fil-PH', vonage: 'fil-PH' },
  sv: { twilio: 'sv-SE', vonage: 'sv-SE' },
  da: { twilio: 'da-DK', vonage: 'da-DK' },
  nb: { twilio: 'nb-NO', vonage: 'nb-NO' },
  no: { twilio: 'nb-NO', vonage: 'nb-NO' },
  fi: { twilio: 'fi-FI', vonage: 'fi-FI' },
  cs: { twilio: 'cs-CZ', vonage: 'cs-CZ' },
  sk: { twilio: 'sk-SK', vonage: 'sk-SK' },
  ro: { twilio: 'ro-RO', vonage: 'ro-RO' },
  hu: { twilio: 'hu-HU', vonage: 'hu-HU' },
  el: { twilio: 'el-GR', vonage: 'el-GR' },
  bg: { twilio: 'bg-BG', vonage: 'bg-BG' },
  ca: { twilio: 'ca-ES', vonage: 'ca-ES' },
  is: { twilio: 'is-IS', vonage: 'is-IS' },
  cy: { twilio: 'cy-GB', vonage: 'cy-GB' },
}

/**
 * The vendor's language for a BCP 47 tag: the whole tag, then language with
 * script and region, language and region, language and script, language
 * alone (`zh-Hant-TW` -> `zh-hant-tw`, `zh-hant-tw`, `zh-tw`, `zh-hant`, `zh`).
 * Undefined when the vendor has none of them: the call then names no language.
 */
export function voiceLanguage(locale: string, vendor: VoiceVendor): string | undefined {
  const subtags = locale.toLowerCase().split('-')
  const lang = subtags[0]!
  const script = subtags.slice(1).find((s) => /^[a-z]{4}$/.test(s))
  const region = subtags.slice(1).find((s) => /^(?:[a-z]{2}|\d{3})$/.test(s))
  const candidates = [subtags.join('-'), [lang, script, region], [lang, region], [lang, script], [lang]].map((c) =>
    Array.isArray(c) ? (c.includes(undefined) ? '' : c.join('-')) : c,
  )
  for (const c of candidates) {
    const found = c !== '' && Object.hasOwn(VOICE_LANGUAGES, c) ? VOICE_LANGUAGES[c]![vendor] : undefined
    if (found) return found
  }
  return undefined
}
