/**
 * The HTML part of a code's e-mail (docs/messages.md#email): the message's own
 * words, in its language (`lang`, and `dir="rtl"` for right-to-left scripts),
 * with the code set apart in large type; around them the operator's look from
 * `[messages.email]`, or the operator's whole template file. Every value put
 * into the HTML is escaped: a message, subject or footer holding `<`, `&` or
 * quotes stays text, and the logo URL and colour are checked by the schema
 * before they reach an attribute.
 */
import { readFileSync } from 'node:fs'
import type { Config } from '../config/schema.ts'
import type { OutboundMessage } from '../otp/types.ts'

export interface EmailLook {
  logoUrl?: string
  accentColor: string
  footer?: string
  /** The operator's template (`html_template`), already read; the built-in layout when absent. */
  template?: string
}

export const DEFAULT_LOOK: EmailLook = { accentColor: '#2563eb' }

type EmailSettings = Config['messages']['email']

/** What an operator's template may hold; each is replaced once, by escaped text (`body`: the message as HTML). */
export const TEMPLATE_PLACEHOLDERS = ['lang', 'dir', 'subject', 'body', 'text', 'code', 'logo_url', 'accent_color', 'footer'] as const
const MAX_TEMPLATE_CHARS = 100_000

/** `[messages.email]` beyond the schema: the template file can be read and shows the code. */
export function checkEmailLook(s: EmailSettings): string[] {
  if (s.html_template === undefined) return []
  const key = 'messages.email.html_template'
  let text: string
  try {
    text = readFileSync(s.html_template, 'utf8')
  } catch (err) {
    return [`${key} names ${s.html_template}, which cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`]
  }
  const problems: string[] = []
  if (text.length > MAX_TEMPLATE_CHARS) problems.push(`${key} names ${s.html_template}, which is longer than ${MAX_TEMPLATE_CHARS} characters`)
  const used = [...text.matchAll(PLACEHOLDER)].map((m) => m[1]!)
  const unknown = [...new Set(used.filter((p) => !(TEMPLATE_PLACEHOLDERS as readonly string[]).includes(p)))]
  if (unknown.length > 0)
    problems.push(
      `${key} names ${s.html_template}, which has unknown placeholders ${unknown.map((p) => `{${p}}`).join(', ')} (known: ${TEMPLATE_PLACEHOLDERS.map((p) => `{${p}}`).join(', ')})`,
    )
  if (!used.includes('body') && !used.includes('code'))
    problems.push(`${key} names ${s.html_template}, which has neither {body} nor {code}: the e-mail would not show the code`)
  return problems
}

/** The look from the config; reads the template file (checkEmailLook has passed). */
export function emailLookOf(s: EmailSettings): EmailLook {
  return {
    accentColor: s.accent_color,
    ...(s.logo_url !== undefined ? { logoUrl: s.logo_url } : {}),
    ...(s.footer !== undefined ? { footer: s.footer } : {}),
    ...(s.html_template !== undefined ? { template: readFileSync(s.html_template, 'utf8') } : {}),
  }
}

const PLACEHOLDER = /\{([a-z_]+)\}/g
/** Scripts written right to left, by language subtag. */
const RTL = new Set(['ar', 'he', 'fa', 'ur', 'ps', 'sd', 'ug', 'yi', 'dv', 'ckb'])

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
}

const lines = (s: string) => escapeHtml(s).replace(/\r\n?|\n/g, '<br>\n')

export function emailHtml(look: EmailLook, m: Pick<OutboundMessage, 'text' | 'code' | 'locale' | 'subject' | 'link'>): string {
  const lang = /^[A-Za-z0-9-]{1,35}$/.test(m.locale) ? m.locale : 'en'
  const values: Record<(typeof TEMPLATE_PLACEHOLDERS)[number], string> = {
    lang,
    dir: RTL.has(lang.split('-')[0]!.toLowerCase()) ? 'rtl' : 'ltr',
    subject: escapeHtml(m.subject),
    body: withLink(bodyHtml(m.text, m.code, look.accentColor), m.link, look.accentColor),
    text: lines(m.text),
    code: escapeHtml(m.code),
    logo_url: escapeHtml(look.logoUrl ?? ''),
    accent_color: escapeHtml(look.accentColor),
    footer: lines(look.footer ?? ''),
  }
  // One pass: a value that holds "{code}" is not expanded again.
  return (look.template ?? builtIn(look)).replace(PLACEHOLDER, (whole, name: string) =>
    Object.hasOwn(values, name) ? values[name as keyof typeof values] : whole,
  )
}

/**
 * A hook's link (docs/integrations.md#supabase), which the text carries on a
 * line of its own, as a link one can click; only an http(s) URL, escaped as the text is.
 */
function withLink(body: string, link: string | undefined, accent: string): string {
  if (link === undefined || !/^https?:\/\//.test(link)) return body
  const shown = escapeHtml(link)
  return body.replace(shown, `<a href="${shown}" style="color:${escapeHtml(accent)};">${shown}</a>`)
}

/** The text in paragraphs, each occurrence of the code (not a longer run of digits) as its own large line. */
function bodyHtml(text: string, code: string, accent: string): string {
  const paragraph = (s: string) => (s.trim() === '' ? [] : [`<p style="margin:0 0 16px;">${lines(s.trim())}</p>`])
  if (!/^\d+$/.test(code)) return paragraph(text).join('\n')
  const out: string[] = []
  let at = 0
  for (const m of text.matchAll(new RegExp(`(?<!\\d)${code}(?!\\d)`, 'g'))) {
    out.push(...paragraph(text.slice(at, m.index)))
    out.push(
      `<p style="margin:0 0 16px;font-family:Menlo,Consolas,'Courier New',monospace;font-size:32px;line-height:40px;font-weight:700;letter-spacing:6px;color:${escapeHtml(accent)};">${code}</p>`,
    )
    at = m.index + m[0].length
  }
  out.push(...paragraph(text.slice(at)))
  return out.join('\n')
}

/** The built-in layout: one centred card in tables and inline styles, which mail clients render alike. */
function builtIn(look: EmailLook): string {
  const logo = look.logoUrl
    ? '<tr><td style="padding:24px 32px 0;"><img src="{logo_url}" alt="" height="40" style="display:block;height:40px;border:0;"></td></tr>\n'
    : ''
  const footer = look.footer
    ? '<p style="margin:16px 0 0;font-family:Helvetica,Arial,sans-serif;font-size:12px;line-height:18px;color:#71717a;">{footer}</p>\n'
    : ''
  return `<!DOCTYPE html>
<html lang="{lang}" dir="{dir}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{subject}</title>
</head>
<body style="margin:0;padding:0;background-color:#f4f4f5;">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="background-color:#f4f4f5;">
<tr><td align="center" style="padding:32px 16px;">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="max-width:480px;background-color:#ffffff;border-radius:8px;border-top:4px solid {accent_color};">
${logo}<tr><td style="padding:24px 32px 32px;font-family:Helvetica,Arial,sans-serif;font-size:16px;line-height:24px;color:#18181b;">
{body}
</td></tr>
</table>
${footer}</td></tr>
</table>
</body>
</html>`
}
