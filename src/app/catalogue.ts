/**
 * The message catalogue from the config (`[messages]`, docs/messages.md):
 * the operator's templates from `[messages.templates.<channel>]` and from
 * `templates_dir`, read at start and on every reload (SIGHUP), and the config
 * check that refuses a template that could not be sent.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ConfigCheck } from '../config/load.ts'
import type { Config } from '../config/schema.ts'
import { MessageCatalogue, type MessageSettings, type OperatorTemplate, templateProblems } from '../otp/messages/catalogue.ts'
import { lintTexts, type TextReport } from '../otp/messages/lint.ts'
import { TEXT_KINDS, type TextKind } from '../otp/messages/template.ts'

export function messageSettingsOf(config: Config): MessageSettings {
  const m = config.messages
  return {
    defaultLocale: m.default_locale,
    localeFromCountry: m.locale_from_country,
    transliterate: m.transliterate,
    smsMaxSegments: m.sms_max_segments,
    voiceMaxCharacters: m.voice_max_characters,
    otpDomain: m.otp_domain ?? null,
  }
}

const FILE_NAME = /^(sms|voice|email|subject)\.([A-Za-z0-9-]+)\.txt$/

/** The operator's templates, and the problems met reading them (a file named otherwise, one that cannot be read, a text given twice). */
export function operatorTemplates(config: Config): { templates: OperatorTemplate[]; problems: string[] } {
  const templates: OperatorTemplate[] = []
  const problems: string[] = []
  const tables = config.messages.templates
  for (const kind of TEXT_KINDS) for (const [locale, text] of Object.entries(tables[kind] ?? {})) templates.push({ kind, locale, text, origin: 'config' })
  const dir = config.messages.templates_dir
  if (dir !== undefined) {
    let names: string[] = []
    try {
      names = readdirSync(dir).sort()
    } catch (err) {
      problems.push(`messages.templates_dir: cannot read ${dir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`)
    }
    for (const name of names) {
      if (name.startsWith('.')) continue
      const m = FILE_NAME.exec(name)
      const path = join(dir, name)
      if (!m) {
        problems.push(`${path}: a template file is named <channel>.<locale>.txt, with channel sms, voice, email or subject (for example sms.es.txt)`)
        continue
      }
      try {
        // One final line break is the file's, not the text's.
        const text = readFileSync(path, 'utf8').replace(/\r?\n$/, '')
        templates.push({ kind: m[1] as TextKind, locale: m[2]!, text, origin: path })
      } catch (err) {
        problems.push(`${path}: cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`)
      }
    }
  }
  const seen = new Map<string, string>()
  for (const t of templates) {
    const key = `${t.kind} ${t.locale.toLowerCase()}`
    const first = seen.get(key)
    if (first !== undefined) problems.push(`${t.origin}: the ${t.kind} template '${t.locale}' is also given by ${first}`)
    else seen.set(key, t.origin)
  }
  return { templates, problems }
}

/** The catalogue in force for `config` (checked by messagesCheck first). */
export function buildCatalogue(config: Config): MessageCatalogue {
  return new MessageCatalogue(messageSettingsOf(config), operatorTemplates(config).templates)
}

export const messagesCheck: ConfigCheck = (config, valid) => {
  if (!valid('messages')) return []
  const { templates, problems } = operatorTemplates(config)
  problems.push(...templateProblems(templates))
  if (problems.length > 0) return problems
  const catalogue = new MessageCatalogue({ ...messageSettingsOf(config), defaultLocale: 'en' }, templates)
  const def = catalogue.resolve(config.messages.default_locale)
  if (def === null) {
    return [
      `messages.default_locale '${config.messages.default_locale}' is no language of the built-in texts or of a template (${catalogue.locales().join(', ')})`,
    ]
  }
  return []
}

/**
 * Everything the texts' checks find (docs/messages.md#checking-templates):
 * every problem (a file named otherwise, a template that does not parse) and
 * a report for each other text, `otpd messages check` and
 * `otpd config check` alike.
 */
export function checkTexts(
  config: Config,
  opts: { builtIn?: boolean; app?: string } = {},
): { problems: string[]; reports: TextReport[]; settings: MessageSettings } {
  const { templates, problems } = operatorTemplates(config)
  problems.push(...templateProblems(templates))
  const settings = messageSettingsOf(config)
  // A template with a problem is reported as that problem only: its size would count a text that is never sent.
  const sound = templates.filter((t) => templateProblems([t]).length === 0)
  return { problems, reports: lintTexts(sound, settings, opts), settings }
}
