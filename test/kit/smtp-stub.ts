/**
 * A real SMTP server on loopback (npm smtp-server) for the email tests: TLS
 * with the fixture certificate (test/kit/fixtures/tls), STARTTLS or implicit TLS,
 * AUTH PLAIN/LOGIN checked against one user, and every accepted message kept
 * raw with its envelope and whether the session was encrypted.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { SMTPServer, type SMTPServerOptions } from 'smtp-server'

export const TLS_DIR = join(import.meta.dir, 'fixtures', 'tls')
export const CA_FILE = join(TLS_DIR, 'ca.pem')

export interface Received {
  raw: string
  mailFrom: string
  rcptTo: string[]
  secure: boolean
  user: string | undefined
}

export interface SmtpStub {
  port: number
  received: Received[]
  /** Every AUTH attempt: method, username, password. */
  auths: { method: string; username: string; password: string }[]
  /** Recipients to refuse at RCPT with 550. */
  refuse: Set<string>
  close(): Promise<void>
}

export async function startSmtpStub(
  opts: { implicitTls?: boolean; noStartTls?: boolean; methods?: string[]; user?: string; password?: string; authOptional?: boolean } = {},
): Promise<SmtpStub> {
  const received: Received[] = []
  const auths: SmtpStub['auths'] = []
  const refuse = new Set<string>()
  const user = opts.user ?? 'otpd'
  const password = opts.password ?? 's3cret-smtp-password'
  const options: SMTPServerOptions = {
    secure: opts.implicitTls ?? false,
    key: readFileSync(join(TLS_DIR, 'server.key')),
    cert: readFileSync(join(TLS_DIR, 'server.pem')),
    hideSTARTTLS: opts.noStartTls ?? false,
    authMethods: opts.methods ?? ['PLAIN', 'LOGIN'],
    authOptional: opts.authOptional ?? false,
    allowInsecureAuth: false,
    logger: false,
    onAuth(auth, _session, cb) {
      auths.push({ method: auth.method, username: auth.username ?? '', password: auth.password ?? '' })
      if (auth.username === user && auth.password === password) cb(null, { user })
      else cb(new Error('Invalid username or password'))
    },
    onRcptTo(address, _session, cb) {
      if (refuse.has(address.address)) {
        const err = new Error(`<${address.address}>: mailbox unavailable`) as Error & { responseCode: number }
        err.responseCode = 550
        return cb(err)
      }
      cb()
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        received.push({
          raw: Buffer.concat(chunks).toString('utf8'),
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          rcptTo: session.envelope.rcptTo.map((r) => r.address),
          secure: session.secure,
          user: session.user as string | undefined,
        })
        cb()
      })
    },
  }
  const server = new SMTPServer(options)
  server.on('error', () => {})
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const port = (server.server.address() as { port: number }).port
  return { port, received, auths, refuse, close: () => new Promise((r) => server.close(() => r())) }
}

/** Splits a raw message into its unfolded headers (in order) and its body. */
export function parseRaw(raw: string): { headers: [string, string][]; body: string } {
  const at = raw.indexOf('\r\n\r\n')
  const head = raw.slice(0, at).replace(/\r\n[ \t]/g, ' ')
  const headers = head.split('\r\n').map((line) => {
    const i = line.indexOf(':')
    return [line.slice(0, i), line.slice(i + 1).trim()] as [string, string]
  })
  return { headers, body: raw.slice(at + 4) }
}

/** Quoted-printable decoding, written independently of the encoder under test. */
export function decodeQuotedPrintable(body: string): string {
  const bytes: number[] = []
  const text = body.replace(/=\r\n/g, '')
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '=' && /^[0-9A-F]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16))
      i += 2
    } else bytes.push(text.charCodeAt(i))
  }
  return Buffer.from(bytes).toString('utf8').replace(/\r\n$/, '')
}

/** RFC 2047 decoding of B and Q encoded words (independent of the encoder). */
export function decodeHeader(value: string): string {
  return value
    .replace(/(\?=)\s+(=\?)/g, '$1$2')
    .replace(/=\?UTF-8\?([BQ])\?([^?]*)\?=/gi, (_m, enc: string, data: string) =>
      enc.toUpperCase() === 'B' ? Buffer.from(data, 'base64').toString('utf8') : decodeQuotedPrintable(data.replace(/_/g, ' ')),
    )
}
