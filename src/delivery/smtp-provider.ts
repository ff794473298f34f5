/**
 * The `smtp` provider: one SMTP session per code through smtp-client, with
 * implicit TLS (`security = "tls"`), required STARTTLS (`"starttls"`) or plain
 * (`"none"`), AUTH PLAIN or LOGIN, and a private CA from `ca_file`. Errors name
 * the SMTP step and reply code, never the recipient or the server's free text
 * (which often quotes the address).
 */
import { isIP } from 'node:net'
import { SMTPClient } from 'smtp-client'
import type { Channel, OutboundMessage } from '../otp/types.ts'
import { randomUuid } from '../lib/random.ts'
import { DEFAULT_LOOK, type EmailLook } from './email-html.ts'
import { buildEmail, isSafeAddress, parseMailbox, type Mailbox } from './email-message.ts'
import type { ProviderOptions } from './options.ts'
import { RecipientRejectedError, type Provider } from './provider.ts'

export type SmtpSecurity = 'tls' | 'starttls' | 'none'

export interface SmtpSettings {
  host: string
  port: number
  security: SmtpSecurity
  username?: string
  password?: string
  from: Mailbox
  ca?: string
  /** The name we give in EHLO; defaults to the From address's domain. */
  heloName: string
}

const DEFAULT_PORT: Record<SmtpSecurity, number> = { tls: 465, starttls: 587, none: 25 }
const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1'])

export function readSmtp(o: ProviderOptions, _used: Channel[]): SmtpSettings {
  const host = o.string('host', { required: 'the SMTP server to send through, such as "smtp.example.com"' }) ?? ''
  const security = o.oneOf('security', ['tls', 'starttls', 'none'] as const, 'starttls')
  const port = o.port('port', DEFAULT_PORT[security])
  const username = o.string('username')
  const password = o.secret('password_env', username ? 'username is set, so name the environment variable holding the password' : false)
  if (password !== undefined && username === undefined) o.problem(`${o.key('password_env')} is set but ${o.key('username')} is not`)
  if (username && security === 'none' && !LOOPBACK.has(host)) {
    o.problem(`${o.key('security')} is "none" but a username is set: the password would cross the network in clear; use "starttls" or "tls"`)
  }
  let from: Mailbox = { address: 'invalid@invalid' }
  const fromText = o.string('from', { required: 'the sender, such as "Acme <no-reply@example.com>"' })
  if (fromText !== undefined) {
    const parsed = parseMailbox(fromText)
    if (parsed) from = parsed
    else o.problem(`${o.key('from')} must be an address or "Name <address>" (got ${JSON.stringify(fromText)})`)
  }
  const ca = o.file('ca_file', false)
  if (ca !== undefined && !ca.includes('-----BEGIN CERTIFICATE-----')) o.problem(`${o.key('ca_file')} holds no PEM certificate`)
  const heloName =
    o.string('helo_name', { test: (v) => (/^[A-Za-z0-9.-]+$|^\[[0-9a-fA-F:.]+\]$/.test(v) ? undefined : 'must be a host name') }) ?? from.address.split('@')[1]!
  return { host, port, security, username, password, from, ca, heloName }
}

export class SmtpProvider implements Provider {
  readonly type = 'smtp'

  constructor(
    readonly name: string,
    private readonly s: SmtpSettings,
    private readonly now: () => number,
    /** `[messages.email]`: the HTML part's look (email-html.ts). */
    private readonly look: EmailLook = DEFAULT_LOOK,
  ) {}

  async send(m: OutboundMessage, signal: AbortSignal): Promise<void> {
    if (!isSafeAddress(m.recipient)) throw new RecipientRejectedError(`${this.name}: the recipient is not an address SMTP can carry`)
    const raw = buildEmail({
      from: this.s.from,
      message: m,
      look: this.look,
      date: this.now(),
      messageId: `${randomUuid()}@${this.s.from.address.split('@')[1]}`,
    })
    const tls = {
      ...(this.s.ca ? { ca: this.s.ca } : {}),
      ...(isIP(this.s.host) ? {} : { servername: this.s.host }),
      rejectUnauthorized: true,
      minVersion: 'TLSv1.2' as const,
    }
    const client = new SMTPClient({ host: this.s.host, port: this.s.port, ...(this.s.security === 'tls' ? { secure: true } : {}), ...tls } as never)
    const abort = () => void client.close().catch(() => {})
    signal.addEventListener('abort', abort, { once: true })
    let step = 'connect'
    try {
      await client.connect()
      step = 'EHLO'
      await client.greet({ hostname: this.s.heloName })
      if (this.s.security === 'starttls') {
        step = 'STARTTLS'
        // smtp-client's typings say string[]; the implementation takes one name.
        if (!client.hasExtension('STARTTLS' as never)) throw new Error('the server does not offer STARTTLS, which security = "starttls" requires')
        await client.secure()
        step = 'EHLO after STARTTLS'
        await client.greet({ hostname: this.s.heloName })
      }
      if (this.s.username !== undefined) {
        const mechanisms = client.getAuthMechanisms()
        step = 'AUTH'
        if (mechanisms.includes('PLAIN')) await client.authPlain({ username: this.s.username, password: this.s.password })
        else if (mechanisms.includes('LOGIN')) await client.authLogin({ username: this.s.username, password: this.s.password })
        else throw new Error(`the server offers no AUTH PLAIN or LOGIN (offers: ${mechanisms.join(' ') || 'none'})`)
      }
      step = 'MAIL FROM'
      await client.mail({ from: this.s.from.address })
      step = 'RCPT TO'
      try {
        await client.rcpt({ to: m.recipient })
      } catch (err) {
        // 5xx on RCPT: the mailbox does not exist or is refused; another server would say the same.
        if (replyCode(err)?.startsWith('5')) throw new RecipientRejectedError(`${this.name}: the server refused the recipient (${replyCode(err)})`)
        throw err
      }
      step = 'DATA'
      await client.data(raw)
      step = 'QUIT'
      await client.quit().catch(() => {})
    } catch (err) {
      if (err instanceof RecipientRejectedError) throw err
      throw new Error(`${this.s.host}:${this.s.port} failed at ${step}: ${describe(err)}`)
    } finally {
      signal.removeEventListener('abort', abort)
      await client.close().catch(() => {})
    }
  }
}

function replyCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown }).code
  return typeof code === 'string' && /^\d{3}$/.test(code) ? code : undefined
}

/** The reply code, or the socket/TLS error code; never the server's free text. */
function describe(err: unknown): string {
  const code = replyCode(err)
  if (code) return `the server answered ${code}`
  const e = err as { code?: unknown; message?: unknown }
  if (typeof e.code === 'string') return e.code
  return typeof e.message === 'string' ? e.message : String(err)
}
