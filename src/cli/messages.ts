/**
 * `otpd messages check` (docs/messages.md#checking-templates): lints every
 * operator template (and with --all the built-in texts): for an SMS its
 * encoding, length and segments with the longest code and the autofill line,
 * the characters that force UCS-2, and a GSM-7 suggestion when each of them
 * has a look-alike. Exits 1 on a template that is wrong or over
 * `messages.sms_max_segments`, after reporting every other template.
 */
import { Command } from 'commander'
import { checkTexts } from '../app/index.ts'
import { gsmLookAlike } from '../lib/sms-encoding.ts'
import type { TextReport } from '../otp/messages/lint.ts'
import { load, printJson, subcommand, type CommonOptions } from './common.ts'

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

/** Every problem and every text that parses, whatever fails first: one wrong template never hides another. */
function checkMessages(opts: CommonOptions & { all?: boolean; app?: string }): void {
  const { config } = load(opts)
  const { problems, reports, settings } = checkTexts(config, { builtIn: opts.all, app: opts.app })
  const ok = problems.length === 0 && !reports.some((r) => r.over_limit)
  if (opts.json) printJson({ ok, problems, sms_max_segments: settings.smsMaxSegments, otp_domain: settings.otpDomain, templates: reports })
  else {
    process.stdout.write(
      reports.length === 0 && problems.length === 0
        ? 'no operator templates (give --all for the built-in texts)\n'
        : reports.map((r) => describe(r, settings.smsMaxSegments)).join(''),
    )
    process.stderr.write(problems.map((p) => `${p}\n`).join(''))
  }
  if (!ok) process.exit(1)
}

const codePoint = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`

function describe(r: TextReport, max: number | null): string {
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
