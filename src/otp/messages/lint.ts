/**
 * The texts' lint (docs/messages.md#checking-templates), shared by
 * `otpd messages check` and `otpd config check` so that both agree: for each
 * SMS its encoding, length and segments with the longest code and the
 * autofill line, the characters that force UCS-2, a GSM-7 suggestion when
 * each has a look-alike, and whether it is over `sms_max_segments`.
 */
import { type SmsSize, gsmLookAlike, nonGsmChars, smsSize, transliterate } from '../../lib/sms-encoding.ts'
import { BUILT_IN_TEXTS } from './built-in.ts'
import type { MessageSettings, OperatorTemplate } from './catalogue.ts'
import { autofillLines } from './compose.ts'
import { parseTemplate, render, TEXT_KINDS } from './template.ts'

/** The longest code a send can have: segments are counted with it. */
const LONGEST_CODE = '9'.repeat(10)
/** `{app}` without a name given: a long account name (GSM-7, as account names are). */
const APP_STAND_IN = 'a'.repeat(20)
/** `{minutes}` at its longest (expires_in 3600). */
const LONGEST_MINUTES = '60'

export interface TextReport {
  kind: string
  locale: string
  origin: string
  encoding?: SmsSize['encoding']
  characters?: number
  segments?: number
  forces_ucs2?: string[]
  suggestion?: { text: string; segments: number } | null
  over_limit?: boolean
}

/**
 * A report for every template that parses (with `builtIn`, the built-in texts
 * too); one that does not is left to templateProblems, so one wrong template
 * never hides what the others say.
 */
export function lintTexts(templates: readonly OperatorTemplate[], settings: MessageSettings, opts: { builtIn?: boolean; app?: string } = {}): TextReport[] {
  const all: OperatorTemplate[] = templates.filter((t) => typeof parseTemplate(t.text, t.origin) !== 'string')
  if (opts.builtIn) {
    for (const [locale, texts] of Object.entries(BUILT_IN_TEXTS))
      for (const kind of TEXT_KINDS) all.push({ kind, locale, text: texts[kind], origin: 'built-in' })
  }
  const values = { code: LONGEST_CODE, app: opts.app ?? APP_STAND_IN, minutes: LONGEST_MINUTES }
  const tail = autofillLines(undefined, settings.otpDomain, LONGEST_CODE)
  const sized = (text: string): SmsSize => {
    const t = parseTemplate(text, '')
    // Filtered above: every text here parses (a transliterated one too: only letters change).
    if (typeof t === 'string') throw new Error(t)
    return smsSize(render(t, values) + tail)
  }
  return all.map((o) => reportOf(o, settings, sized))
}

/** One text's report: for an SMS its size as sent, and what forces UCS-2 with a GSM-7 suggestion when each has a look-alike. */
function reportOf(o: OperatorTemplate, settings: MessageSettings, sized: (text: string) => SmsSize): TextReport {
  const r: TextReport = { kind: o.kind, locale: o.locale, origin: o.origin }
  if (o.kind !== 'sms') return r
  const sent = settings.transliterate ? transliterate(o.text) : o.text
  const size = sized(sent)
  r.encoding = size.encoding
  r.characters = size.units
  r.segments = size.segments
  r.over_limit = settings.smsMaxSegments !== null && size.segments > settings.smsMaxSegments
  if (size.encoding === 'UCS-2') {
    const forcing = nonGsmChars(sent)
    r.forces_ucs2 = forcing
    const alike = forcing.every((c) => gsmLookAlike(c) !== undefined)
    const suggested = transliterate(sent)
    r.suggestion = alike ? { text: suggested, segments: sized(suggested).segments } : null
  }
  return r
}

/** The problem `otpd config check` reports for a text over `sms_max_segments`. */
export function overLimitProblem(r: TextReport, max: number | null): string {
  return `${r.origin}: ${r.kind} template '${r.locale}' takes ${r.segments} SMS segments with a 10-digit code, over messages.sms_max_segments (${max}): see otpd messages check`
}
