/**
 * Message templates (docs/messages.md#templates): text with the placeholders
 * `{code}`, `{app}` (the account's name) and `{minutes}` (the expiry). Each is
 * parsed once, when the catalogue is built, into its literal parts and slots,
 * so a send only joins strings.
 */

export const PLACEHOLDERS = ['code', 'app', 'minutes'] as const
export type Placeholder = (typeof PLACEHOLDERS)[number]

/** The four texts a language has: the SMS, the voice text, and the email subject and plain body. */
export const TEXT_KINDS = ['sms', 'voice', 'email', 'subject'] as const
export type TextKind = (typeof TEXT_KINDS)[number]

export interface Template {
  /** The text as written (after transliteration, for an SMS with `transliterate` on). */
  source: string
  /** `parts.length === slots.length + 1`: part, slot, part, ... part. */
  parts: readonly string[]
  slots: readonly Placeholder[]
  /** `built-in`, `config` or the file it came from. */
  origin: string
}

export interface Values {
  code: string
  app: string
  minutes: string
}

const SLOT = /\{([A-Za-z_]+)\}/g

/** A parsed template, or the sentence saying what is wrong with it. */
export function parseTemplate(source: string, origin: string): Template | string {
  const parts: string[] = []
  const slots: Placeholder[] = []
  let last = 0
  for (const m of source.matchAll(SLOT)) {
    const name = m[1]!
    if (!(PLACEHOLDERS as readonly string[]).includes(name)) return `unknown placeholder {${name}}: use {code}, {app} or {minutes}`
    parts.push(source.slice(last, m.index))
    slots.push(name as Placeholder)
    last = m.index + m[0].length
  }
  parts.push(source.slice(last))
  return { source, parts, slots, origin }
}

/** The template with its placeholders filled in. */
export function render(t: Template, v: Values): string {
  let out = t.parts[0]!
  for (let i = 0; i < t.slots.length; i++) out += v[t.slots[i]!] + t.parts[i + 1]!
  return out
}

/** What a template of `kind` must satisfy, beyond its placeholders; null when it does. */
export function templateProblem(kind: TextKind, source: string): string | null {
  if (kind === 'subject') {
    return source.length >= 1 && source.length <= 200 && !/[\u0000-\u001f\u007f]/.test(source) ? null : 'a subject must be a single line of 1-200 characters'
  }
  if (source.length < 1 || source.length > 1600) return 'a template must have 1-1600 characters'
  if (!source.includes('{code}')) return 'a template must contain the {code} placeholder'
  return null
}
