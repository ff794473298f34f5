/**
 * The HTML part of a code's e-mail (src/delivery/email-html.ts): the message's
 * words in its language with the code in large type, the operator's look from
 * `[messages.email]` or their own template file, everything escaped, and the
 * config errors of a bad look. The part as it travels (MIME, quoted-printable,
 * a real SMTP server) is checked in smtp-provider.test.ts.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { resolveConfig } from '../../src/app/load-config.ts'
import { DEFAULT_LOOK, emailHtml, emailLookOf, type EmailLook } from '../../src/delivery/email-html.ts'
import { configProblems } from '../kit/config.ts'

const dir = mkdtempSync(join(tmpdir(), 'otpd-email-html-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function file(name: string, text: string): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

const message = { text: 'Your verification code is: 424242', code: '424242', locale: 'en', subject: 'Your Verification Code' }
const CODE_STYLE =
  "margin:0 0 16px;font-family:Menlo,Consolas,'Courier New',monospace;font-size:32px;line-height:40px;font-weight:700;letter-spacing:6px;color:"

test('the built-in layout: lang and dir, the subject as title, the words as a paragraph, the code alone in large type in the accent colour', () => {
  const html = emailHtml(DEFAULT_LOOK, message)
  expect(html).toStartWith('<!DOCTYPE html>\n<html lang="en" dir="ltr">\n')
  expect(html).toContain('<title>Your Verification Code</title>')
  expect(html).toContain(`<p style="margin:0 0 16px;">Your verification code is:</p>\n<p style="${CODE_STYLE}#2563eb;">424242</p>\n</td></tr>`)
  expect(html).toContain('border-top:4px solid #2563eb;')
  expect(html).not.toContain('<img')
  expect(html).not.toContain('font-size:12px') // no footer
  expect(html).toEndWith('</html>')
})

test("a hook's link (docs/integrations.md#supabase) is a link one can click, escaped; a link that is no http(s) URL stays text", () => {
  const link = 'https://abc.supabase.co/auth/v1/verify?token=pkce_1&type=magiclink&redirect_to=https://app.example.com/'
  const html = emailHtml(DEFAULT_LOOK, { ...message, text: `${message.text}\n\n${link}`, link })
  const shown = link.replaceAll('&', '&amp;')
  expect(html).toContain(`<p style="margin:0 0 16px;"><a href="${shown}" style="color:#2563eb;">${shown}</a></p>`)
  const bad = 'javascript:alert(1)'
  expect(emailHtml(DEFAULT_LOOK, { ...message, text: `${message.text}\n\n${bad}`, link: bad })).not.toContain('<a ')
})

test('the language follows the locale; right-to-left scripts get dir="rtl"', () => {
  expect(emailHtml(DEFAULT_LOOK, { ...message, locale: 'pt-BR' })).toContain('<html lang="pt-BR" dir="ltr">')
  expect(emailHtml(DEFAULT_LOOK, { ...message, locale: 'ar' })).toContain('<html lang="ar" dir="rtl">')
  expect(emailHtml(DEFAULT_LOOK, { ...message, locale: 'he-IL' })).toContain('<html lang="he-IL" dir="rtl">')
  expect(emailHtml(DEFAULT_LOOK, { ...message, locale: 'en"><script>' })).toContain('<html lang="en" dir="ltr">')
})

test('every occurrence of the code is set apart (not a longer run of digits); line breaks are kept; without the code in the text, only words', () => {
  const html = emailHtml(DEFAULT_LOOK, { ...message, code: '1234', text: 'Hi!\nCode 1234, ref 912345.\n1234' })
  expect(html).toContain(
    `<p style="margin:0 0 16px;">Hi!<br>\nCode</p>\n<p style="${CODE_STYLE}#2563eb;">1234</p>\n<p style="margin:0 0 16px;">, ref 912345.</p>\n<p style="${CODE_STYLE}#2563eb;">1234</p>\n</td>`,
  )
  const test = emailHtml(DEFAULT_LOOK, { ...message, code: '', text: 'This is a test message from otpd.' })
  expect(test).toContain('<p style="margin:0 0 16px;">This is a test message from otpd.</p>\n</td>')
})

test('whatever the caller or the operator wrote is escaped: text, subject, footer', () => {
  const look: EmailLook = { accentColor: '#abc', footer: 'Acme <b>&</b> "Co"\nO\'Hare' }
  const html = emailHtml(look, {
    ...message,
    subject: '</title><script>alert(1)</script>',
    text: `<img src=x onerror="alert('1')"> & 424242 {code} {footer}`,
  })
  expect(html).not.toContain('<script>')
  expect(html).not.toContain('<img src=x')
  expect(html).toContain('<title>&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;</title>')
  expect(html).toContain('<p style="margin:0 0 16px;">&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt; &amp;</p>')
  // Placeholders in a value are text, not expanded again.
  expect(html).toContain('<p style="margin:0 0 16px;">{code} {footer}</p>')
  expect(html).toContain('color:#71717a;">Acme &lt;b&gt;&amp;&lt;/b&gt; &quot;Co&quot;<br>\nO&#39;Hare</p>')
})

test('the look: a logo at the top, the accent colour on the border and the code, the footer under the card', () => {
  const look = emailLookOf({ logo_url: 'https://example.com/logo.png?a=1&b=2', accent_color: '#0f766e', footer: 'Example Inc.' })
  const html = emailHtml(look, message)
  expect(html).toContain('<img src="https://example.com/logo.png?a=1&amp;b=2" alt="" height="40"')
  expect(html).toContain('border-top:4px solid #0f766e;')
  expect(html).toContain(`<p style="${CODE_STYLE}#0f766e;">424242</p>`)
  expect(html).toContain('color:#71717a;">Example Inc.</p>\n</td></tr>')
})

test('an operator template: each placeholder replaced once by escaped text, the rest kept as written (CSS braces too)', () => {
  const path = file(
    'mine.html',
    '<html lang="{lang}" dir="{dir}"><style>p{margin:0} .c { color: {accent_color} }</style>' +
      '<h1>{subject}</h1><div class="c">{code}</div><pre>{text}</pre>{body}<img src="{logo_url}"><small>{footer}</small></html>',
  )
  const look = emailLookOf({ accent_color: '#123456', html_template: path, footer: 'a & b', logo_url: 'https://example.com/l.png' })
  const html = emailHtml(look, { ...message, locale: 'de', subject: 'Ihr Code <Acme>', text: 'Code: 424242\n{lang}' })
  expect(html).toBe(
    '<html lang="de" dir="ltr"><style>p{margin:0} .c { color: #123456 }</style><h1>Ihr Code &lt;Acme&gt;</h1><div class="c">424242</div>' +
      '<pre>Code: 424242<br>\n{lang}</pre>' +
      `<p style="margin:0 0 16px;">Code:</p>\n<p style="${CODE_STYLE}#123456;">424242</p>\n<p style="margin:0 0 16px;">{lang}</p>` +
      '<img src="https://example.com/l.png"><small>a &amp; b</small></html>',
  )
})

test('config: the look is checked with clear errors', () => {
  const good = file('good.html', '<p>{code}</p>')
  expect(configProblems(() => resolveConfig({ messages: { email: { html_template: good, logo_url: 'https://example.com/a.png', footer: 'x' } } }))).toEqual([])
  expect(
    configProblems(() =>
      resolveConfig({
        messages: { email: { accent_color: 'red', logo_url: 'http://example.com/a.png', footer: 'f'.repeat(1001) } },
      }),
    ),
  ).toEqual([
    'messages.email.logo_url must be an https:// URL without spaces, quotes or angle brackets (got "http://example.com/a.png")',
    'messages.email.accent_color must be a colour written #rgb or #rrggbb (got "red")',
    `messages.email.footer must be a string of 1 to 1000 characters (got ${JSON.stringify('f'.repeat(1001))})`,
  ])
  expect(configProblems(() => resolveConfig({ messages: { email: { logo_url: 'https://example.com/a.png" onload="x' } } }))).toEqual([
    'messages.email.logo_url must be an https:// URL without spaces, quotes or angle brackets (got "https://example.com/a.png\\" onload=\\"x")',
  ])
  expect(configProblems(() => resolveConfig({ messages: { email: { colour: '#fff' } } }))).toEqual(['messages.email.colour is not a known setting'])
})

test('config: an html_template that cannot be read, has an unknown placeholder, or would not show the code', () => {
  const missing = join(dir, 'missing.html')
  expect(configProblems(() => resolveConfig({ messages: { email: { html_template: missing } } }))).toEqual([
    `messages.email.html_template names ${missing}, which cannot be read (ENOENT)`,
  ])
  const odd = file('odd.html', '<p>{code} {name} {app}</p>')
  expect(configProblems(() => resolveConfig({ messages: { email: { html_template: odd } } }))).toEqual([
    `messages.email.html_template names ${odd}, which has unknown placeholders {name}, {app} (known: {lang}, {dir}, {subject}, {body}, {text}, {code}, {logo_url}, {accent_color}, {footer})`,
  ])
  const blind = file('blind.html', '<p>{subject}: {text}</p>')
  expect(configProblems(() => resolveConfig({ messages: { email: { html_template: blind } } }))).toEqual([
    `messages.email.html_template names ${blind}, which has neither {body} nor {code}: the e-mail would not show the code`,
  ])
})
