/**
 * The `smtp` provider against a real SMTP server on loopback (test/kit/smtp-stub.ts):
 * STARTTLS and implicit TLS with a private CA, AUTH PLAIN and LOGIN, refusals,
 * the raw message's exact headers, parts and encoding, and a code sent by
 * e-mail through the API and verified through the API. The HTML part has its
 * own file (email-html.test.ts).
 */
import { describe, expect, test } from 'bun:test'
import PostalMime from 'postal-mime'
import { ProviderOptions } from '../../src/delivery/options.ts'
import { RecipientRejectedError } from '../../src/delivery/provider.ts'
import { readSmtp, SmtpProvider } from '../../src/delivery/smtp-provider.ts'
import type { OutboundMessage } from '../../src/otp/types.ts'
import { closeAfterTest } from '../kit/cleanup.ts'
import { harnessPerTest } from '../kit/harness.ts'
import { outbound, OUTBOUND_AT } from '../kit/outbound.ts'
import { CA_FILE, decodeHeader, decodeQuotedPrintable, parseRaw, startSmtpStub, type SmtpStub } from '../kit/smtp-stub.ts'

const PASSWORD = 's3cret-smtp-password'
const ENV = { OTPD_SMTP_PASSWORD: PASSWORD }
const NOW = OUTBOUND_AT

const start = harnessPerTest()
/** A stub closed after the test (closing it twice is harmless, so a test may close it first). */
async function stub(opts: Parameters<typeof startSmtpStub>[0] = {}): Promise<SmtpStub> {
  return closeAfterTest(await startSmtpStub(opts))
}

function table(port: number, extra: Record<string, unknown> = {}) {
  return {
    type: 'smtp',
    host: 'localhost',
    port,
    security: 'starttls',
    username: 'otpd',
    password_env: 'OTPD_SMTP_PASSWORD',
    from: 'Acme <no-reply@example.com>',
    ca_file: CA_FILE,
    ...extra,
  }
}

function provider(t: Record<string, unknown>, env: Record<string, string> = ENV) {
  const o = new ProviderOptions('mail', t, env)
  const settings = readSmtp(o, ['email'])
  o.unknownKeys('smtp')
  expect(o.problems).toEqual([])
  return new SmtpProvider('mail', settings, () => NOW)
}

const message = (over: Partial<OutboundMessage> = {}) => outbound({ channel: 'email', recipient: 'bob@example.org', ...over })

const INTENDED_HEADERS = ['Date', 'From', 'To', 'Subject', 'Message-ID', 'MIME-Version', 'Content-Language', 'Content-Type', 'Auto-Submitted']
const PART_HEADERS = (type: string): [string, string][] => [
  ['Content-Type', `${type}; charset=UTF-8`],
  ['Content-Transfer-Encoding', 'quoted-printable'],
]

/** A decoded part as postal-mime gives it: LF line ends, and the line break before the boundary kept (RFC 2046 gives it to the boundary). */
const asParsed = (s: string) => `${s.replace(/\r\n/g, '\n')}\n`

/**
 * The raw message cut by hand at the boundary its Content-Type names (no
 * preamble, no epilogue): the top headers, then each part's headers and its
 * quoted-printable body decoded.
 */
function mime(raw: string) {
  const { headers, body } = parseRaw(raw)
  const boundary = /^multipart\/alternative; boundary="([^"]+)"$/.exec(Object.fromEntries(headers)['Content-Type']!)?.[1]
  if (!boundary) throw new Error('not multipart/alternative')
  const chunks = body.split(`--${boundary}`)
  expect(chunks[0]).toBe('')
  expect(chunks.at(-1)).toBe('--\r\n')
  const parts = chunks.slice(1, -1).map((c) => {
    expect(c.startsWith('\r\n') && c.endsWith('\r\n')).toBe(true)
    const part = parseRaw(c.slice(2, -2))
    return { headers: part.headers, text: decodeQuotedPrintable(part.body) }
  })
  expect(parts.map((p) => p.headers)).toEqual([PART_HEADERS('text/plain'), PART_HEADERS('text/html')])
  return { headers, text: parts[0]!.text, html: parts[1]!.text }
}

describe('sessions', () => {
  test('STARTTLS then AUTH PLAIN: the message arrives over TLS with its envelope', async () => {
    const s = await stub()
    await provider(table(s.port)).send(message(), AbortSignal.timeout(5000))
    expect(s.received).toHaveLength(1)
    const r = s.received[0]!
    expect(r.secure).toBe(true)
    expect(r.user).toBe('otpd')
    expect(r.mailFrom).toBe('no-reply@example.com')
    expect(r.rcptTo).toEqual(['bob@example.org'])
    expect(s.auths).toEqual([{ method: 'PLAIN', username: 'otpd', password: PASSWORD }])
  })

  test('AUTH LOGIN when the server offers only LOGIN', async () => {
    const s = await stub({ methods: ['LOGIN'] })
    await provider(table(s.port)).send(message(), AbortSignal.timeout(5000))
    expect(s.auths.map((a) => a.method)).toEqual(['LOGIN'])
    expect(s.received).toHaveLength(1)
  })

  test('implicit TLS (security = "tls")', async () => {
    const s = await stub({ implicitTls: true })
    await provider(table(s.port, { security: 'tls' })).send(message(), AbortSignal.timeout(5000))
    expect(s.received[0]!.secure).toBe(true)
  })

  test('security = "none" to a loopback relay without auth', async () => {
    const s = await stub({ noStartTls: true, authOptional: true })
    await provider({ type: 'smtp', host: '127.0.0.1', port: s.port, security: 'none', from: 'no-reply@example.com' }).send(message(), AbortSignal.timeout(5000))
    expect(s.received[0]!.secure).toBe(false)
    expect(s.received[0]!.user).toBeUndefined()
  })

  test('STARTTLS is required: a server that does not offer it gets neither the password nor the message', async () => {
    const s = await stub({ noStartTls: true })
    const err = await provider(table(s.port))
      .send(message(), AbortSignal.timeout(5000))
      .catch((e) => e)
    expect(err.message).toBe(`localhost:${s.port} failed at STARTTLS: the server does not offer STARTTLS, which security = "starttls" requires`)
    expect(s.auths).toEqual([])
    expect(s.received).toEqual([])
  })

  test('the certificate is verified: without ca_file the private CA is refused before AUTH', async () => {
    const s = await stub()
    const err = await provider(table(s.port, { ca_file: '' }))
      .send(message(), AbortSignal.timeout(5000))
      .catch((e) => e)
    expect(err).toBeInstanceOf(Error)
    expect(err.message).toStartWith(`localhost:${s.port} failed at STARTTLS`)
    expect(s.auths).toEqual([])
    expect(s.received).toEqual([])
  })

  test('a wrong password fails at AUTH; the error names the reply code, not the password', async () => {
    const s = await stub()
    const err = await provider(table(s.port), { OTPD_SMTP_PASSWORD: 'wrong-password' })
      .send(message(), AbortSignal.timeout(5000))
      .catch((e) => e)
    expect(err.message).toBe(`localhost:${s.port} failed at AUTH: the server answered 535`)
    expect(err).not.toBeInstanceOf(RecipientRejectedError)
    expect(s.received).toEqual([])
  })

  test('a 5xx at RCPT is a rejected recipient (no failover), and the error does not quote the address', async () => {
    const s = await stub()
    s.refuse.add('nobody@example.org')
    const err = await provider(table(s.port))
      .send(message({ recipient: 'nobody@example.org' }), AbortSignal.timeout(5000))
      .catch((e) => e)
    expect(err).toBeInstanceOf(RecipientRejectedError)
    expect(err.message).toBe('mail: the server refused the recipient (550)')
    expect(s.received).toEqual([])
  })

  test('a refused connection is a plain failure (the next provider is tried)', async () => {
    const s = await stub()
    const port = s.port
    await s.close()
    const err = await provider(table(port))
      .send(message(), AbortSignal.timeout(5000))
      .catch((e) => e)
    expect(err).not.toBeInstanceOf(RecipientRejectedError)
    expect(err.message).toBe(`localhost:${port} failed at connect: ECONNREFUSED`)
  })
})

test('a server that accepts the connection but never greets is cut at the time budget and the next one is tried', async () => {
  const silent = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const b = await stub()
  const h = await start({
    credits: 1,
    configuredDelivery: true,
    env: ENV,
    config: { delivery: { timeout_ms: 1000 }, channels: { email: ['mail', 'backup'] }, providers: { mail: table(silent.port), backup: table(b.port) } },
  })
  const started = performance.now()
  const sent = await h.send({ channel: 'email', recipient: 'erin@example.org' })
  silent.stop(true)
  expect(sent.status).toBe(200)
  expect(performance.now() - started).toBeLessThan(1500)
  expect(b.received).toHaveLength(1)
  expect(h.logs.find((l) => l.includes('provider failed'))).toMatch(/"provider":"mail".*timed out after \d+ ms/)
})

describe('the raw message', () => {
  test('has exactly the intended headers, CRLF endings and a quoted-printable UTF-8 body', async () => {
    const s = await stub()
    await provider(table(s.port)).send(message(), AbortSignal.timeout(5000))
    const raw = s.received[0]!.raw
    expect(raw.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/) // every line ends in CRLF
    const { headers, text, html } = mime(raw)
    expect(headers.map(([k]) => k)).toEqual(INTENDED_HEADERS)
    const h = Object.fromEntries(headers)
    expect(h.Date).toBe('Thu, 01 Jan 2026 12:00:00 +0000')
    expect(h.From).toBe('"Acme" <no-reply@example.com>')
    expect(h.To).toBe('<bob@example.org>')
    expect(h.Subject).toBe('Your Verification Code')
    expect(h['Message-ID']).toMatch(/^<[0-9a-f-]{36}@example\.com>$/)
    expect(h['Content-Language']).toBe('en')
    expect(h['Content-Type']).toBe('multipart/alternative; boundary="=_otpd_alternative"')
    expect(text).toBe('Your verification code is: 424242')
    expect(html).toStartWith('<!DOCTYPE html>\r\n<html lang="en" dir="ltr">\r\n')
    expect(html).toContain('\r\n<p style="margin:0 0 16px;">Your verification code is:</p>\r\n')
    expect(html).toContain('color:#2563eb;">424242</p>\r\n')
    // An independent MIME parser reads the same two alternatives.
    const parsed = await PostalMime.parse(raw)
    expect([parsed.subject, parsed.text, parsed.html, parsed.attachments]).toEqual(['Your Verification Code', asParsed(text), asParsed(html), []])
  })

  test('a Spanish message: Content-Language es, the subject RFC 2047-encoded, both parts in Spanish', async () => {
    const s = await stub()
    const subject = 'Tu código de verificación'
    await provider(table(s.port)).send(message({ locale: 'es', subject, text: 'Tu código: 424242' }), AbortSignal.timeout(5000))
    const raw = s.received[0]!.raw
    const { headers, text, html } = mime(raw)
    const h = Object.fromEntries(headers)
    expect(h['Content-Language']).toBe('es')
    expect(h.Subject).toMatch(/^=\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=$/)
    expect(decodeHeader(h.Subject!)).toBe(subject)
    expect(text).toBe('Tu código: 424242')
    expect(html).toContain('<html lang="es" dir="ltr">')
    expect(html).toContain('<title>Tu código de verificación</title>')
    expect(html).toContain('<p style="margin:0 0 16px;">Tu código:</p>')
    const parsed = await PostalMime.parse(raw)
    expect([parsed.subject, parsed.text, parsed.html]).toEqual([subject, asParsed(text), asParsed(html)])
    expect(parsed.headers.find((x) => x.key === 'content-language')?.value).toBe('es')
  })

  test('a locale that is not a language tag never reaches a header', async () => {
    const s = await stub()
    await provider(table(s.port)).send(message({ locale: 'en\r\nBcc: x@example.com' }), AbortSignal.timeout(5000))
    const { headers, html } = mime(s.received[0]!.raw)
    expect(headers.map(([k]) => k)).toEqual(INTENDED_HEADERS.filter((k) => k !== 'Content-Language'))
    expect(html).toContain('<html lang="en" dir="ltr">')
  })

  const hostile = [
    { name: 'CR/LF that tries to add headers', subject: 'Hi\r\nBcc: victim@example.com', text: 'Code {c}\r\nBcc: victim@example.com\r\n\r\nextra' },
    { name: 'lines starting with "."', subject: '.subject', text: '.\n..\n.{c}\nmiddle\n.\n.end' },
    { name: 'a lone "." line that would end DATA', subject: 'x', text: 'before\n.\nQUIT\nafter {c}' },
    { name: 'non-ASCII', subject: 'Ваш код — 確認コード 🔐', text: 'Код: {c} — ü ß 確認 🔐' },
    { name: '1600-character values', subject: 'S'.repeat(1600), text: `${'é'.repeat(800)}{c}${'.x'.repeat(397)}` },
    { name: 'encoded-word lookalikes and header syntax', subject: '=?UTF-8?B?SGFja2Vk?= To: x', text: 'Subject: fake\nFrom attacker\n=41 {c} =' },
  ]
  for (const c of hostile) {
    test(`${c.name}: exactly the intended headers and body`, async () => {
      const s = await stub()
      const text = c.text.replace('{c}', '424242')
      await provider(table(s.port)).send(message({ subject: c.subject, text }), AbortSignal.timeout(5000))
      expect(s.received).toHaveLength(1)
      const r = s.received[0]!
      expect(r.rcptTo).toEqual(['bob@example.org'])
      const { headers, text: plain, html } = mime(r.raw)
      expect(headers.map(([k]) => k)).toEqual(INTENDED_HEADERS)
      expect(decodeHeader(Object.fromEntries(headers).Subject!)).toBe(c.subject)
      expect(plain).toBe(text.replace(/\r\n?/g, '\n').replace(/\n/g, '\r\n'))
      expect(html).toContain('424242</p>')
      for (const line of r.raw.split('\r\n')) {
        expect(line.length).toBeLessThanOrEqual(78)
        expect(line.startsWith('.')).toBe(false)
      }
    })
  }

  test('a recipient that could inject SMTP commands or headers is rejected before connecting', async () => {
    const s = await stub()
    for (const recipient of [
      'bob@example.org>\r\nRCPT TO:<evil@example.com',
      'bob@example.org\nBcc: x@example.com',
      'a b@example.org',
      '"q"@example.org',
      'bob@exämple.org',
    ]) {
      const err = await provider(table(s.port))
        .send(message({ recipient }), AbortSignal.timeout(5000))
        .catch((e) => e)
      expect(err).toBeInstanceOf(RecipientRejectedError)
    }
    expect(s.auths).toEqual([])
    expect(s.received).toEqual([])
  })
})

describe('through the API', () => {
  async function harness(port: number, extraProviders: Record<string, unknown> = {}, email = ['mail']) {
    const h = await start({
      credits: 5,
      configuredDelivery: true,
      env: ENV,
      config: { channels: { email }, providers: { mail: table(port), ...extraProviders } },
    })
    return h
  }

  test('a code sent by e-mail arrives over STARTTLS+AUTH and verifies', async () => {
    const s = await stub()
    const h = await harness(s.port)
    const sent = await h.send({
      channel: 'email',
      recipient: 'Alice.Smith@Example.org',
      subject: 'Ihr Code für Acme',
      message: 'Hallo!\n.\nIhr Code: {code}\nGrüße',
    })
    expect(sent.status).toBe(200)
    const r = s.received[0]!
    expect(r.rcptTo).toEqual(['Alice.Smith@Example.org'])
    const { headers, text, html } = mime(r.raw)
    expect(decodeHeader(Object.fromEntries(headers).Subject!)).toBe('Ihr Code für Acme')
    const code = /Ihr Code: (\d{6})\r\nGrüße$/.exec(text)![1]!
    expect(text).toBe(`Hallo!\r\n.\r\nIhr Code: ${code}\r\nGrüße`)
    expect(html).toContain(`<p style="margin:0 0 16px;">Hallo!<br>\r\n.<br>\r\nIhr Code:</p>`)
    expect(html).toContain(`;">${code}</p>\r\n<p style="margin:0 0 16px;">Grüße</p>`)
    const wrong = await h.verify({ verification_id: sent.json.verification_id, code: code === '000000' ? '111111' : '000000' })
    expect([wrong.status, wrong.json.verified, wrong.json.message]).toEqual([200, false, 'Invalid code'])
    const ok = await h.verify({ verification_id: sent.json.verification_id, code })
    expect([ok.status, ok.json.verified, ok.json.message]).toEqual([200, true, 'Code verified successfully'])
    expect((await h.server.admin.balance()).balance).toBe(4)
    expect(h.logs.join('\n')).not.toContain(code)
    expect(h.logs.join('\n')).not.toContain(PASSWORD)
  })

  test('[messages.email] dresses the HTML part of a code sent through the API; the plain part is the message alone', async () => {
    const s = await stub()
    const h = await start({
      credits: 1,
      configuredDelivery: true,
      env: ENV,
      config: {
        channels: { email: ['mail'] },
        providers: { mail: table(s.port) },
        messages: { email: { logo_url: 'https://example.com/logo.png', accent_color: '#b91c1c', footer: 'Acme & Co\nSpringfield' } },
      },
    })
    const sent = await h.send({ channel: 'email', recipient: 'frank@example.org' })
    expect(sent.status).toBe(200)
    const raw = s.received[0]!.raw
    const { text, html } = mime(raw)
    const code = /^Your verification code is: (\d{6})$/.exec(text)![1]!
    expect(html).toContain('<img src="https://example.com/logo.png" alt="" height="40"')
    expect(html).toContain(`color:#b91c1c;">${code}</p>`)
    expect(html).toContain('color:#71717a;">Acme &amp; Co<br>\r\nSpringfield</p>')
    const parsed = await PostalMime.parse(raw)
    expect(parsed.html).toContain(`color:#b91c1c;">${code}</p>`)
    expect(parsed.text).toBe(`Your verification code is: ${code}\n`)
    expect((await h.verify({ verification_id: sent.json.verification_id, code })).json.verified).toBe(true)
  })

  test('the longest hostile values the API accepts arrive intact; CR/LF in a subject is refused before any SMTP', async () => {
    const s = await stub()
    const h = await harness(s.port)
    const subject = `.Ünïcode 🔐 ${'ß'.repeat(150)} =?UTF-8?B?eA==?= end`.slice(0, 200)
    const template = `.{code}\n..\n.\nFrom me\n${'€. '.repeat(480)}`.slice(0, 1600)
    const sent = await h.send({ channel: 'email', recipient: 'long@example.org', subject, message: template })
    expect(sent.status).toBe(200)
    const { headers, text } = mime(s.received[0]!.raw)
    expect(headers.map(([k]) => k)).toEqual(INTENDED_HEADERS)
    expect(decodeHeader(Object.fromEntries(headers).Subject!)).toBe(subject)
    const code = /^\.(\d{6})\r\n/.exec(text)![1]!
    expect(text).toBe(template.replace('{code}', code).replace(/\n/g, '\r\n'))
    for (const line of s.received[0]!.raw.split('\r\n')) expect(line.startsWith('.')).toBe(false)
    expect((await h.verify({ verification_id: sent.json.verification_id, code })).json.verified).toBe(true)

    const injected = await h.send({ channel: 'email', recipient: 'long@example.org', subject: 'Hi\r\nBcc: victim@example.com' })
    expect([injected.status, injected.json.error]).toEqual([400, 'subject must be a single line of 1-200 characters'])
    const badRecipient = await h.send({ channel: 'email', recipient: 'a@example.org\r\nRCPT TO:<victim@example.com>' })
    expect([badRecipient.status, badRecipient.json.error]).toEqual([400, 'recipient must be a valid email address for the email channel'])
    expect(s.received).toHaveLength(1)
  })

  test('all SMTP servers down: 500, credit refunded, verify 404, log names the providers and no secret', async () => {
    const a = await stub()
    const b = await stub()
    const h = await harness(a.port, { backup: table(b.port) }, ['mail', 'backup'])
    await a.close()
    await b.close()
    const sent = await h.send({ channel: 'email', recipient: 'carol@example.org' })
    expect(sent.status).toBe(500)
    expect(sent.json.error).toBe('Failed to send verification')
    expect((await h.server.admin.balance()).balance).toBe(5)
    // The client never saw the id; even someone holding it gets 404.
    const [{ id }] = (await h.sql('SELECT id FROM verifications')) as [{ id: string }]
    const v = await h.verify({ verification_id: id, code: '123456' })
    expect([v.status, v.json.error]).toEqual([404, 'Verification not found'])
    const logs = h.logs.join('\n')
    expect(logs).toContain('"provider":"mail"')
    expect(logs).toContain('"provider":"backup"')
    expect(logs).toContain('ECONNREFUSED')
    expect(logs).not.toContain(PASSWORD)
    expect(logs).not.toContain('carol@example.org')
  })

  test('the first server refusing the connection fails over to the second', async () => {
    const a = await stub()
    const b = await stub()
    const h = await harness(a.port, { backup: table(b.port) }, ['mail', 'backup'])
    await a.close()
    const sent = await h.send({ channel: 'email', recipient: 'dave@example.org' })
    expect(sent.status).toBe(200)
    expect(b.received).toHaveLength(1)
  })
})
