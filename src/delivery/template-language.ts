/**
 * Which of a WhatsApp template's approved languages a send uses
 * (docs/delivery.md#template-languages): the send's language as Meta spells
 * it (`pt-BR` is `pt_BR`), then the same language with any region the
 * provider lists (`en` finds `en_US`, `pt-PT` finds `pt_BR`), then the first
 * language listed.
 */

/** Meta's language codes (`en_US`, `pt_BR`, `es`), as `[providers.NAME] languages` may list them. */
export const TEMPLATE_LANGUAGE = /^[a-z]{2,3}(_[A-Za-z0-9]{2,8})?$/

export function templateLanguage(locale: string, languages: readonly string[]): string {
  const wanted = locale.replaceAll('-', '_').toLowerCase()
  const exact = languages.find((l) => l.toLowerCase() === wanted)
  if (exact !== undefined) return exact
  const base = wanted.split('_')[0]
  const sameLanguage = languages.find((l) => l.toLowerCase().split('_')[0] === base)
  return sameLanguage ?? languages[0]!
}
