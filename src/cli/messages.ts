/**
 * `otpd messages check` (docs/messages.md#checking-templates): lints every
 * operator template (and with --all the built-in texts): for an SMS its
 * encoding, length and segments with the longest code and the autofill line,
 * the characters that force UCS-2, and a GSM-7 suggestion when each of them
 * has a look-alike. Exits 1 on a template that is wrong or over
 * `messages.sms_max_segments`.
 */
import { Command } from 'commander'
import { messageSettingsOf, operatorTemplates } from '../app/index.ts'
import { type SmsSize, gsmLookAlike, nonGsmChars, smsSize, transliterate } from '../lib/sms-encoding.ts'
import { BUILT_IN_TEXTS } from '../otp/messages/built-in.ts'
import { type MessageSettings, type OperatorTemplate, templateProblems } from '../otp/messages/catalogue.ts'
import { autofillLines } from '../otp/messages/compose.ts'
import { parseTemplate, render, TEXT_KINDS } from '../otp/messages/template.ts'
import { load, printJson, subcommand, type CommonOptions } from './common.ts'

/** The longest code a send can have: segments are counted with it. */
const LONGEST_CODE = '9'.repeat(10)
/** `{app}` without --app: a long account name (GSM-7, as account names are). */
const APP_STAND_IN = 'a'.repeat(20)
/** `{minutes}` at its longest (expires_in 3600). */
const LONGEST_MINUTES = '60'

interface Report {
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

export function messagesCommand(): Command {
  const messages = new Command('messages').description('the texts a person receives (docs/messages.md)')
  subcommand(
    messages,
    'check',
    'lint the templates: encoding, segments, characters that force UCS-2; exits 1 if one is wrong or too long',
    'otpd messages check',
    'otpd messages check --all --app acme',
  )
    .option('--all', 'also the built-in texts')
    .option('--app <name>', 'count {app} as this account name (default: 20 characters)')
    .action(checkMessages)
  return messages
}

function checkMessages(opts: CommonOptions & { all?: boolean; app?: string }): void {
  const { config } = load(opts)
  const { templates, problems } = operatorTemplates(config)
  problems.push(...templateProblems(templates))
  if (problems.length > 0) {
    if (opts.json) printJson({ ok: false, problems })
    else process.stderr.write(problems.map((p) => `${p}\n`).join(''))
    process.exit(1)
  }
  const settings = messageSettingsOf(config)
  const all: OperatorTemplate[] = [...templates]
  if (opts.all) {
    for (const [locale, texts] of Object.entries(BUILT_IN_TEXTS))
      for (const kind of TEXT_KINDS) all.push({ kind, locale, text: texts[kind], origin: 'built-in' })
  }
  const values = { code: LONGEST_CODE, app: opts.app ?? APP_STAND_IN, minutes: LONGEST_MINUTES }
  const tail = autofillLines(undefined, settings.otpDomain, LONGEST_CODE)
  const sized = (text: string) => {
    // Checked above: every template parses.
    const t = parseTemplate(text, '')
    if (typeof t === 'string') throw new Error(t)
    return smsSize(render(t, values) + tail)
  }
  const reports = all.map((o) => reportOf(o, settings, sized))
  const over = reports.some((r) => r.over_limit)
  if (opts.json) printJson({ ok: !over, sms_max_segments: settings.smsMaxSegments, otp_domain: settings.otpDomain, templates: reports })
  else
    process.stdout.write(
      reports.length === 0 ? 'no operator templates (give --all for the built-in texts)\n' : reports.map((r) => describe(r, settings.smsMaxSegments)).join(''),
    )
  if (over) process.exit(1)
}

/** One text's report: for an SMS its size as sent, and what forces UCS-2 with a GSM-7 suggestion when each has a look-alike. */
function reportOf(o: OperatorTemplate, settings: MessageSettings, sized: (text: string) => SmsSize): Report {
  const r: Report = { kind: o.kind, locale: o.locale, origin: o.origin }
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

const codePoint = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`

function describe(r: Report, max: number | null): string {
  const head = `${r.kind} ${r.locale} (${r.origin})`
  if (r.encoding === undefined) return `${head}: ok\n`
  const plural = (n: number) => `${n} segment${n === 1 ? '' : 's'}`
  let out = `${head}: ${r.encoding}, ${r.characters} characters, ${plural(r.segments!)} with a 10-digit code`
  if (r.over_limit) out += `: over messages.sms_max_segments (${max})`
  out += '\n'
  if (r.forces_ucs2) {
    out += `  forces UCS-2: ${r.forces_ucs2.map((c) => `${c} (${codePoint(c)})`).join(', ')}\n`
    out += r.suggestion
      ? `  GSM-7 suggestion: ${JSON.stringify(r.suggestion.text)} (${plural(r.suggestion.segments)})\n`
      : `  no GSM-7 suggestion: ${r.forces_ucs2.filter((c) => gsmLookAlike(c) === undefined).join(' ')} have no GSM-7 look-alike\n`
  }
  return out
}
