/**
 * Builds the raw e-mail for a code: multipart/alternative of a text/plain part
 * (the message as written) and a text/html part (email-html.ts), both UTF-8
 * quoted-printable; RFC 2047 Subject and display name; Content-Language from
 * the message's locale; CRLF line endings. Nothing a caller supplies can start
 * a header or end the DATA section: the subject and names are encoded words,
 * the bodies are quoted-printable with "." and "From " at the start of a line
 * encoded, and addresses are checked by `isSafeAddress`.
 */
import type { OutboundMessage } from '../otp/types.ts'
import { emailHtml, type EmailLook } from './email-html.ts'

export interface Mailbox {
  name?: string
  address: string
}

export interface EmailParts {
  from: Mailbox
  /** The message: its recipient, subject, text, code and locale. */
  message: Pick<OutboundMessage, 'recipient' | 'subject' | 'text' | 'code' | 'locale'>
  look: EmailLook
  /** Milliseconds since the epoch. */
  date: number
  /** Without angle brackets: `uuid@domain`. */
  messageId: string
}

const CRLF = '\r\n'
/**
 * Fixed, and yet it can never occur in a part: every "=" of a quoted-printable
 * body is followed by two hex digits or ends its line, so "=_" never appears
 * there, and the part headers are our own.
 */
export const BOUNDARY = '=_otpd_alternative'
/** A BCP 47 tag as a header can carry it; anything else is left out. */
const LANGUAGE_TAG = /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/

/** An address we are willing to put in a header and an SMTP command: printable ASCII, one @, no brackets, spaces or quotes. */
export function isSafeAddress(address: string): boolean {
  return (
    address.length <= 254 &&
    /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(address)
  )
}

/** `Acme <no-reply@example.com>` or a bare address; undefined when it is neither. */
export function parseMailbox(value: string): Mailbox | undefined {
  const angle = /^\s*(.*?)\s*<([^<>]+)>\s*$/.exec(value)
  const name = angle ? angle[1]!.replace(/^"(.*)"$/, '$1') : undefined
  const address = angle ? angle[2]! : value.trim()
  if (!isSafeAddress(address)) return undefined
  if (name !== undefined && /[\u0000-\u001f\u007f]/.test(name)) return undefined
  return name ? { name, address } : { address }
}

export function buildEmail(p: EmailParts): string {
  const m = p.message
  const headers = [
    `Date: ${rfc5322Date(p.date)}`,
    `From: ${formatMailbox(p.from)}`,
    `To: <${m.recipient}>`,
    `Subject: ${encodeHeaderText(m.subject, 'Subject: '.length)}`,
    `Message-ID: <${p.messageId}>`,
    'MIME-Version: 1.0',
    ...(LANGUAGE_TAG.test(m.locale) ? [`Content-Language: ${m.locale}`] : []),
    `Content-Type: multipart/alternative; boundary="${BOUNDARY}"`,
    'Auto-Submitted: auto-generated',
  ]
  const part = (type: string, body: string) =>
    [`--${BOUNDARY}`, `Content-Type: ${type}; charset=UTF-8`, 'Content-Transfer-Encoding: quoted-printable', '', quotedPrintable(body)].join(CRLF)
  return [headers.join(CRLF), '', part('text/plain', m.text), part('text/html', emailHtml(p.look, m)), `--${BOUNDARY}--`].join(CRLF)
}

function formatMailbox(m: Mailbox): string {
  if (!m.name) return `<${m.address}>`
  const name = /^[\x20-\x7e]*$/.test(m.name) && m.name.length <= 60 ? `"${m.name.replace(/(["\\])/g, '\\$1')}"` : encodeHeaderText(m.name, 'From: '.length)
  return `${name} <${m.address}>`
}

/** `Sun, 22 Nov 2026 11:34:37 +0000` */
export function rfc5322Date(ms: number): string {
  return new Date(ms).toUTCString().replace(/GMT$/, '+0000')
}

/**
 * Header text as-is when it is short printable ASCII that cannot be mistaken
 * for an encoded word; otherwise RFC 2047 B-encoded words of at most 75
 * characters, split on character boundaries and folded onto continuation lines.
 */
export function encodeHeaderText(text: string, firstLineUsed: number): string {
  if (/^[\x20-\x7e]*$/.test(text) && !text.includes('=?') && firstLineUsed + text.length <= 78) return text
  // Each physical line at most 76 characters: an encoded word costs 12 characters of
  // "=?UTF-8?B??=" plus 4 base64 characters per 3 bytes; continuation lines start with a space.
  const bytesFor = (used: number) => Math.floor((76 - used - 12) / 4) * 3
  const words: string[] = []
  let chunk = ''
  for (const ch of text) {
    if (Buffer.byteLength(chunk + ch) > bytesFor(words.length === 0 ? firstLineUsed : 1)) {
      words.push(chunk)
      chunk = ''
    }
    chunk += ch
  }
  if (chunk || words.length === 0) words.push(chunk)
  return words.map((w) => `=?UTF-8?B?${Buffer.from(w, 'utf8').toString('base64')}?=`).join(`${CRLF} `)
}

/**
 * RFC 2045 quoted-printable of UTF-8 text whose lines end in "\n" (or "\r\n").
 * Lines of at most 76 characters; "=", non-ASCII, controls and trailing
 * whitespace encoded; a "." or "From " at the start of a line encoded, so no
 * line of the body can end the SMTP DATA section or be mangled by mbox.
 */
export function quotedPrintable(text: string): string {
  return text.replace(/\r\n?/g, '\n').split('\n').map(encodeLine).join(CRLF)
}

function encodeLine(line: string): string {
  const bytes = Buffer.from(line, 'utf8')
  const tokens: string[] = []
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!
    const atStart = i === 0
    const last = i === bytes.length - 1
    const plain =
      (b >= 33 && b <= 126 && b !== 61) || // printable except "="
      ((b === 32 || b === 9) && !last) // inner whitespace
    const dotAtStart = atStart && b === 46
    const fromAtStart = atStart && line.startsWith('From ')
    tokens.push(plain && !dotAtStart && !fromAtStart ? String.fromCharCode(b) : `=${b.toString(16).toUpperCase().padStart(2, '0')}`)
  }
  // Soft line breaks: at most 75 characters plus "=" per physical line, never inside an "=XX".
  const out: string[] = []
  let current = ''
  for (const t of tokens) {
    if (current.length + t.length > 75) {
      out.push(current + '=')
      current = ''
    }
    // A continuation line starting with "." would be read as the end of DATA by a naive server.
    current += current === '' && out.length > 0 && t === '.' ? '=2E' : t
  }
  out.push(current)
  return out.join(CRLF)
}
