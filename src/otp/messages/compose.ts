/**
 * The text a send delivers (docs/messages.md): its language, chosen in the
 * documented order, its words (the caller's `message` and `subject` win),
 * the autofill lines of an SMS, and the SMS's encoding and segments.
 */
import { destinationOf } from '../../lib/phone-country.ts'
import { type SmsSize, smsSize } from '../../lib/sms-encoding.ts'
import type { Channel } from '../types.ts'
import { COUNTRY_LOCALES } from './built-in.ts'
import type { MessageCatalogue } from './catalogue.ts'
import { render } from './template.ts'

/** What the account adds to a send (otpd accounts set --locale, --otp-domain). */
export interface AccountMessaging {
  /** The account's name: `{app}`. */
  name: string
  locale: string | null
  otpDomain: string | null
}

export interface ComposeInput {
  channel: Channel
  recipient: string
  /** The caller's template and subject, when given: they win over every built-in or operator text. */
  message?: string
  subject?: string
  /** The request's `locale`, as the catalogue resolved it. */
  locale?: string
  appHash?: string
  code: string
  expiresInSeconds: number
  account: AccountMessaging
  /** `message` is a whole text from a hook (docs/integrations.md): delivered as given, with no autofill line. */
  wholeText?: boolean
  /** A link an email carries under its text (docs/integrations.md#supabase). */
  link?: string
}

export interface Composed {
  text: string
  subject: string
  /** The language the text was chosen in (a tag of the catalogue). */
  locale: string
  /** SMS only. */
  sms: SmsSize | null
}

/** Which link of the chain chose the language (tests and docs/messages.md#how-a-text-is-chosen). */
export type LocaleSource = 'request' | 'account' | 'country' | 'default'

/**
 * The request's `locale`; the account's; the language of the number's
 * country when `locale_from_country` is on; `default_locale`. An account's
 * language the catalogue no longer knows (its operator templates were
 * removed) is skipped.
 */
export function chooseLocale(
  cat: MessageCatalogue,
  input: Pick<ComposeInput, 'locale' | 'channel' | 'recipient' | 'account'>,
): { locale: string; source: LocaleSource } {
  if (input.locale !== undefined) return { locale: input.locale, source: 'request' }
  const own = input.account.locale === null ? null : cat.resolve(input.account.locale)
  if (own !== null) return { locale: own, source: 'account' }
  if (cat.settings.localeFromCountry && input.channel !== 'email') {
    const byCountry = COUNTRY_LOCALES[destinationOf(input.recipient).country]
    const known = byCountry === undefined ? null : cat.resolve(byCountry)
    if (known !== null) return { locale: known, source: 'country' }
  }
  return { locale: cat.settings.defaultLocale, source: 'default' }
}

export function composeMessage(cat: MessageCatalogue, input: ComposeInput): Composed {
  const { locale } = chooseLocale(cat, input)
  const texts = cat.textsOf(locale)
  // Voice reads the code digit by digit ("1, 2, 3, 4").
  const code = input.channel === 'voice' ? input.code.split('').join(', ') : input.code
  const values = { code, app: input.account.name, minutes: String(Math.ceil(input.expiresInSeconds / 60)) }
  const kind = input.channel === 'email' ? 'email' : input.channel
  let text = input.message !== undefined ? input.message.replaceAll('{code}', code) : render(texts[kind], values)
  const subject = input.subject ?? render(texts.subject, values)
  if (input.link !== undefined) text += `\n\n${input.link}`
  if (input.channel !== 'sms') return { text, subject, locale, sms: null }
  if (input.wholeText) return { text, subject, locale, sms: smsSize(text) }
  text += autofillLines(input.appHash, input.account.otpDomain ?? cat.settings.otpDomain, input.code)
  return { text, subject, locale, sms: smsSize(text) }
}

/**
 * The lines that let a phone fill the code in (docs/messages.md#autofill),
 * after a blank line: Android's SMS Retriever hash, then the WICG origin-bound
 * line `@<domain> #<code>`, which must be the message's last.
 */
export function autofillLines(appHash: string | undefined, domain: string | null, code: string): string {
  if (appHash === undefined && domain === null) return ''
  let out = '\n'
  if (appHash !== undefined) out += `\n${appHash}`
  if (domain !== null) out += `\n@${domain} #${code}`
  return out
}
