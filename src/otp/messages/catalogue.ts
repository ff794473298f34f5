/**
 * The texts in force (docs/messages.md#how-a-text-is-chosen): the built-in
 * ones overlaid by the operator's templates, per channel and language, built
 * once at start and again on each reload (SIGHUP). Every language it knows
 * has all four texts resolved at build time (its own, else its parent's
 * `es-MX` -> `es`, else the default language's, else English), so a send
 * does one map look-up and joins a few strings.
 */
import { transliterate } from '../../lib/sms-encoding.ts'
import { BUILT_IN_TEXTS } from './built-in.ts'
import { parseTemplate, type Template, type TextKind, TEXT_KINDS, templateProblem } from './template.ts'

export interface OperatorTemplate {
  kind: TextKind
  /** A BCP 47 tag, as written. */
  locale: string
  text: string
  /** `config` or the file's path. */
  origin: string
}

export interface MessageSettings {
  /** A tag the catalogue knows (config check). */
  defaultLocale: string
  localeFromCountry: boolean
  transliterate: boolean
  smsMaxSegments: number | null
  /** Characters of a voice call's text, at most (null: the 1-1600 rule alone). */
  voiceMaxCharacters: number | null
  otpDomain: string | null
}

export const DEFAULT_MESSAGE_SETTINGS: MessageSettings = {
  defaultLocale: 'en',
  localeFromCountry: false,
  transliterate: false,
  smsMaxSegments: null,
  voiceMaxCharacters: null,
  otpDomain: null,
}

const TAG = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/

/** Other names of the built-in languages (and of scripts for Chinese). */
const ALIASES: Record<string, string> = {
  no: 'nb',
  nn: 'nb',
  iw: 'he',
  in: 'id',
  'zh-hant': 'zh-TW',
  'zh-hk': 'zh-TW',
  'zh-mo': 'zh-TW',
  'zh-hans': 'zh',
  'zh-cn': 'zh',
  'zh-sg': 'zh',
}

/** The canonical case of a well-formed tag (`pt-br` -> `pt-BR`, `zh-hant` -> `zh-Hant`); null when malformed. */
export function canonicalTag(tag: string): string | null {
  if (tag.length > 35 || !TAG.test(tag)) return null
  return tag
    .split('-')
    .map((p, i) =>
      i === 0 ? p.toLowerCase() : p.length === 2 ? p.toUpperCase() : p.length === 4 ? p[0]!.toUpperCase() + p.slice(1).toLowerCase() : p.toLowerCase(),
    )
    .join('-')
}

export class MessageCatalogue {
  private readonly byLower = new Map<string, string>()
  private readonly texts = new Map<string, Record<TextKind, Template>>()

  /** Throws on a template that does not parse (config check reports these first, with templateProblems). */
  /** As given, with `defaultLocale` as the catalogue writes it (`pt-br` -> `pt-BR`). */
  readonly settings: MessageSettings

  constructor(
    settings: MessageSettings,
    readonly operator: readonly OperatorTemplate[] = [],
  ) {
    const own = new Map<string, Partial<Record<TextKind, Template>>>()
    const put = (locale: string, kind: TextKind, text: string, origin: string) => {
      const source = kind === 'sms' && settings.transliterate ? transliterate(text) : text
      const t = parseTemplate(source, origin)
      if (typeof t === 'string') throw new Error(`${origin}: ${kind} ${locale}: ${t}`)
      own.set(locale, { ...own.get(locale), [kind]: t })
    }
    for (const [locale, texts] of Object.entries(BUILT_IN_TEXTS)) for (const kind of TEXT_KINDS) put(locale, kind, texts[kind], 'built-in')
    for (const o of operator) put(canonicalTag(o.locale) ?? o.locale, o.kind, o.text, o.origin)
    for (const locale of own.keys()) this.byLower.set(locale.toLowerCase(), locale)
    const chain = (locale: string): string[] => {
      const out: string[] = []
      for (let tag = locale; tag !== ''; tag = tag.includes('-') ? tag.slice(0, tag.lastIndexOf('-')) : '') if (own.has(tag)) out.push(tag)
      return out
    }
    this.settings = { ...settings, defaultLocale: this.resolve(settings.defaultLocale) ?? 'en' }
    const fallback = [...chain(this.settings.defaultLocale), 'en']
    for (const locale of own.keys()) {
      const order = [...chain(locale), ...fallback]
      const resolved = {} as Record<TextKind, Template>
      for (const kind of TEXT_KINDS) resolved[kind] = order.map((l) => own.get(l)?.[kind]).find((t) => t !== undefined)!
      this.texts.set(locale, resolved)
    }
  }

  /**
   * The language of the catalogue that serves `tag`: itself, else its parent
   * (`es-MX` -> `es`), in any case; null when the tag is malformed or no
   * language of it is known.
   */
  resolve(tag: string): string | null {
    if (tag.length > 35 || !TAG.test(tag)) return null
    for (let t = tag.toLowerCase(); t !== ''; t = t.includes('-') ? t.slice(0, t.lastIndexOf('-')) : '') {
      const alias = ALIASES[t]
      const hit = this.byLower.get(t) ?? (alias !== undefined ? this.byLower.get(alias.toLowerCase()) : undefined)
      if (hit !== undefined) return hit
    }
    return null
  }

  /** The four texts of a language `resolve` returned. */
  textsOf(locale: string): Record<TextKind, Template> {
    return this.texts.get(locale) ?? this.texts.get('en')!
  }

  locales(): string[] {
    return [...this.texts.keys()]
  }
}

/** Problems of the operator's templates, one sentence each (config check). */
export function templateProblems(templates: readonly OperatorTemplate[]): string[] {
  const problems: string[] = []
  for (const o of templates) {
    const where = `${o.origin}: ${o.kind} template '${o.locale}'`
    if (canonicalTag(o.locale) === null) problems.push(`${where}: '${o.locale}' is not a language tag such as es or pt-BR`)
    const parsed = parseTemplate(o.text, o.origin)
    if (typeof parsed === 'string') problems.push(`${where}: ${parsed}`)
    const p = templateProblem(o.kind, o.text)
    if (p) problems.push(`${where}: ${p}`)
  }
  return problems
}
