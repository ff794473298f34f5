/**
 * Send request validation: every row of the send table in
 * docs/api.md#request-bodies-and-validation and every send 400 of
 * docs/api.md#errors, with the exact messages. A row that
 * expects 200 sits next to the 400 it borders, so both sides of each limit are
 * pinned down.
 */
import { beforeEach, expect, test } from 'bun:test'
import { harnessPerTest, type Harness } from '../kit/harness.ts'

let h: Harness
const start = harnessPerTest({ credits: 1 })
beforeEach(async () => {
  h = await start()
})

const CHANNEL = 'channel is required and must be one of: sms, email, voice, whatsapp'
const PHONE = 'recipient must be a valid E.164 phone number for SMS and voice channels'
const EMAIL = 'recipient must be a valid email address for the email channel'
const MESSAGE = 'message must be a string of 1-1600 characters'
const PLACEHOLDER = 'message must contain the {code} placeholder'
const SUBJECT = 'subject must be a single line of 1-200 characters'
const EXPIRES_IN = 'expires_in must be an integer between 60 and 3600'
const CODE = 'code must be a numeric string between 4-10 digits'

const sms = { channel: 'sms', recipient: '+14155550123' }
const voice = { channel: 'voice', recipient: '+14155550123' }
const email = { channel: 'email', recipient: 'ada@example.com' }

const x = (n: number) => 'x'.repeat(n)
// A domain of 189 characters (labels of at most 63), so 64 + 1 + 189 = 254.
const DOMAIN_189 = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(61)}`

interface Row {
  name: string
  body: Record<string, unknown>
  /** Raw JSON text, when JSON.stringify cannot express the body (e.g. `300.0`). */
  raw?: string
  status: 200 | 400
  error?: string
}

const rows: Row[] = [
  // channel
  { name: 'channel missing', body: { recipient: '+14155550123' }, status: 400, error: CHANNEL },
  { name: 'channel not one of the three', body: { ...sms, channel: 'fax' }, status: 400, error: CHANNEL },
  { name: 'channel in another case', body: { ...sms, channel: 'SMS' }, status: 400, error: CHANNEL },
  { name: 'channel empty', body: { ...sms, channel: '' }, status: 400, error: CHANNEL },
  { name: 'channel a number', body: { ...sms, channel: 1 }, status: 400, error: CHANNEL },
  { name: 'channel null', body: { ...sms, channel: null }, status: 400, error: CHANNEL },
  { name: 'channel an array', body: { ...sms, channel: ['sms'] }, status: 400, error: CHANNEL },
  { name: 'channel sms ok', body: sms, status: 200 },
  { name: 'channel voice ok', body: voice, status: 200 },
  { name: 'channel email ok', body: email, status: 200 },

  // recipient, sms and voice: ^\+[1-9][0-9]{1,14}$
  { name: 'sms recipient missing', body: { channel: 'sms' }, status: 400, error: PHONE },
  { name: 'sms recipient without +', body: { ...sms, recipient: '14155550123' }, status: 400, error: PHONE },
  { name: 'sms recipient with 0 after +', body: { ...sms, recipient: '+04155550123' }, status: 400, error: PHONE },
  { name: 'sms recipient of 16 digits', body: { ...sms, recipient: '+1234567890123456' }, status: 400, error: PHONE },
  { name: 'sms recipient of 15 digits ok', body: { ...sms, recipient: '+123456789012345' }, status: 200 },
  { name: 'sms recipient of 1 digit', body: { ...sms, recipient: '+1' }, status: 400, error: PHONE },
  { name: 'sms recipient of 2 digits ok', body: { ...sms, recipient: '+12' }, status: 200 },
  { name: 'sms recipient with letters', body: { ...sms, recipient: '+1415555ABCD' }, status: 400, error: PHONE },
  { name: 'sms recipient with spaces', body: { ...sms, recipient: '+1 415 555 0123' }, status: 400, error: PHONE },
  { name: 'sms recipient with a trailing newline', body: { ...sms, recipient: '+14155550123\n' }, status: 400, error: PHONE },
  { name: 'sms recipient a number', body: { ...sms, recipient: 14155550123 }, status: 400, error: PHONE },
  { name: 'sms recipient an email address', body: { ...sms, recipient: 'ada@example.com' }, status: 400, error: PHONE },
  { name: 'voice recipient missing', body: { channel: 'voice' }, status: 400, error: PHONE },
  { name: 'voice recipient without +', body: { ...voice, recipient: '14155550123' }, status: 400, error: PHONE },
  { name: 'voice recipient with 0 after +', body: { ...voice, recipient: '+04155550123' }, status: 400, error: PHONE },
  { name: 'voice recipient of 16 digits', body: { ...voice, recipient: '+1234567890123456' }, status: 400, error: PHONE },
  { name: 'voice recipient with letters', body: { ...voice, recipient: '+1415555abcd' }, status: 400, error: PHONE },
  { name: 'voice recipient a number', body: { ...voice, recipient: 14155550123 }, status: 400, error: PHONE },

  // recipient, email: WHATWG valid e-mail address, local <= 64, whole <= 254
  { name: 'email recipient missing', body: { channel: 'email' }, status: 400, error: EMAIL },
  { name: 'email recipient empty', body: { ...email, recipient: '' }, status: 400, error: EMAIL },
  { name: 'email recipient without @', body: { ...email, recipient: 'ada.example.com' }, status: 400, error: EMAIL },
  { name: 'email recipient with a space', body: { ...email, recipient: 'ada lovelace@example.com' }, status: 400, error: EMAIL },
  { name: 'email recipient without local part', body: { ...email, recipient: '@example.com' }, status: 400, error: EMAIL },
  { name: 'email recipient without domain', body: { ...email, recipient: 'ada@' }, status: 400, error: EMAIL },
  { name: 'email recipient with two @', body: { ...email, recipient: 'ada@b@example.com' }, status: 400, error: EMAIL },
  { name: 'email recipient domain label starting with -', body: { ...email, recipient: 'ada@-example.com' }, status: 400, error: EMAIL },
  { name: 'email recipient with non-ASCII local part', body: { ...email, recipient: 'adä@example.com' }, status: 400, error: EMAIL },
  { name: 'email recipient a phone number', body: { ...email, recipient: '+14155550123' }, status: 400, error: EMAIL },
  { name: 'email recipient a number', body: { ...email, recipient: 42 }, status: 400, error: EMAIL },
  { name: 'email recipient with WHATWG specials ok', body: { ...email, recipient: "a.b+c_d!#$%&'*/=?^`{|}~-@x-y.example.com" }, status: 200 },
  { name: 'email recipient with a dotless domain ok (WHATWG)', body: { ...email, recipient: 'ada@localhost' }, status: 200 },
  { name: 'email local part of 64 ok', body: { ...email, recipient: `${x(64)}@example.com` }, status: 200 },
  { name: 'email local part of 65', body: { ...email, recipient: `${x(65)}@example.com` }, status: 400, error: EMAIL },
  { name: 'email address of 254 ok', body: { ...email, recipient: `${x(64)}@${DOMAIN_189}` }, status: 200 },
  { name: 'email address of 255', body: { ...email, recipient: `${x(64)}@${DOMAIN_189}c` }, status: 400, error: EMAIL },

  // message
  { name: 'message empty', body: { ...sms, message: '' }, status: 400, error: MESSAGE },
  // 1600 characters is the body's rule on every channel; an SMS or a call that long is over their default caps (below).
  { name: 'message of 1600 characters ok', body: { ...email, message: `{code}${x(1594)}` }, status: 200 },
  { name: 'message of 1601 characters', body: { ...sms, message: `{code}${x(1595)}` }, status: 400, error: MESSAGE },
  { name: 'message of 1600 astral characters ok (code points)', body: { ...email, message: `{code}${'😀'.repeat(1594)}` }, status: 200 },
  // What one credit buys by default (docs/messages.md#encoding-and-segments): 3 SMS segments, 300 characters of a call.
  { name: 'sms of 3 GSM-7 segments ok', body: { ...sms, message: `{code}${x(459 - 6)}` }, status: 200 },
  { name: 'sms of 4 GSM-7 segments', body: { ...sms, message: `{code}${x(460 - 6)}` }, status: 400, error: 'message is longer than 3 SMS segments' },
  { name: 'sms of 4 UCS-2 segments', body: { ...sms, message: `{code}${'ж'.repeat(202 - 6)}` }, status: 400, error: 'message is longer than 3 SMS segments' },
  // A call's text is counted as it is read: the 6 digits as '1, 2, 3, 4, 5, 6' (16 characters).
  { name: 'voice text of 300 characters ok', body: { ...voice, message: `{code}${x(300 - 16)}` }, status: 200 },
  {
    name: 'voice text of 301 characters',
    body: { ...voice, message: `{code}${x(301 - 16)}` },
    status: 400,
    error: 'message is longer than 300 characters for a voice call',
  },
  { name: 'message of 1601 astral characters', body: { ...sms, message: `{code}${'😀'.repeat(1595)}` }, status: 400, error: MESSAGE },
  { name: 'message with BEL', body: { ...sms, message: 'Code {code}\u0007' }, status: 400, error: MESSAGE },
  { name: 'message with CR', body: { ...sms, message: 'Code\r\n{code}' }, status: 400, error: MESSAGE },
  { name: 'message with a tab', body: { ...sms, message: 'Code:\t{code}' }, status: 400, error: MESSAGE },
  { name: 'message with NUL', body: { ...sms, message: 'Code {code}\u0000' }, status: 400, error: MESSAGE },
  { name: 'message with DEL', body: { ...sms, message: 'Code {code}\u007f' }, status: 400, error: MESSAGE },
  { name: 'message with LF ok', body: { ...sms, message: 'Your code:\n{code}\n' }, status: 200 },
  { name: 'message without {code}', body: { ...sms, message: 'Your code is here' }, status: 400, error: PLACEHOLDER },
  { name: 'message with {CODE} only', body: { ...sms, message: 'Your code: {CODE}' }, status: 400, error: PLACEHOLDER },
  { name: 'message with { code } only', body: { ...sms, message: 'Your code: { code }' }, status: 400, error: PLACEHOLDER },
  { name: 'message a number', body: { ...sms, message: 123 }, status: 400, error: MESSAGE },
  { name: 'message null', body: { ...sms, message: null }, status: 400, error: MESSAGE },
  { name: 'message an object', body: { ...sms, message: { text: '{code}' } }, status: 400, error: MESSAGE },

  // subject (validated for every channel)
  { name: 'subject empty', body: { ...email, subject: '' }, status: 400, error: SUBJECT },
  { name: 'subject of 200 characters ok', body: { ...email, subject: x(200) }, status: 200 },
  { name: 'subject of 201 characters', body: { ...email, subject: x(201) }, status: 400, error: SUBJECT },
  { name: 'subject with CR', body: { ...email, subject: 'Your\rcode' }, status: 400, error: SUBJECT },
  { name: 'subject with LF', body: { ...email, subject: 'Your\ncode' }, status: 400, error: SUBJECT },
  { name: 'subject with a tab', body: { ...email, subject: 'Your\tcode' }, status: 400, error: SUBJECT },
  { name: 'subject with non-ASCII ok', body: { ...email, subject: 'Votre code de vérification 🔐' }, status: 200 },
  { name: 'subject a number', body: { ...email, subject: 5 }, status: 400, error: SUBJECT },
  { name: 'subject null', body: { ...email, subject: null }, status: 400, error: SUBJECT },
  { name: 'subject empty on sms', body: { ...sms, subject: '' }, status: 400, error: SUBJECT },
  { name: 'subject with LF on voice', body: { ...voice, subject: 'a\nb' }, status: 400, error: SUBJECT },
  { name: 'subject on sms ok', body: { ...sms, subject: 'ignored for sms' }, status: 200 },

  // expires_in
  { name: 'expires_in 59', body: { ...sms, expires_in: 59 }, status: 400, error: EXPIRES_IN },
  { name: 'expires_in 60 ok', body: { ...sms, expires_in: 60 }, status: 200 },
  { name: 'expires_in 3600 ok', body: { ...sms, expires_in: 3600 }, status: 200 },
  { name: 'expires_in 3601', body: { ...sms, expires_in: 3601 }, status: 400, error: EXPIRES_IN },
  { name: 'expires_in 300.5', body: { ...sms, expires_in: 300.5 }, status: 400, error: EXPIRES_IN },
  { name: 'expires_in as a string', body: { ...sms, expires_in: '300' }, status: 400, error: EXPIRES_IN },
  { name: 'expires_in as an out-of-range string', body: { ...sms, expires_in: '5' }, status: 400, error: EXPIRES_IN },
  { name: 'expires_in null', body: { ...sms, expires_in: null }, status: 400, error: EXPIRES_IN },
  { name: 'expires_in negative', body: { ...sms, expires_in: -300 }, status: 400, error: EXPIRES_IN },
  { name: 'expires_in 300.0 ok', body: {}, raw: '{"channel":"sms","recipient":"+14155550123","expires_in":300.0}', status: 200 },

  // code
  { name: 'code of 3 digits', body: { ...sms, code: '123' }, status: 400, error: CODE },
  { name: 'code of 4 digits ok', body: { ...sms, code: '1234' }, status: 200 },
  { name: 'code of 10 digits ok', body: { ...sms, code: '0123456789' }, status: 200 },
  { name: 'code of 11 digits', body: { ...sms, code: '12345678901' }, status: 400, error: CODE },
  { name: 'code with a letter', body: { ...sms, code: '12a4' }, status: 400, error: CODE },
  { name: 'code with a space', body: { ...sms, code: ' 1234' }, status: 400, error: CODE },
  { name: 'code with non-ASCII digits', body: { ...sms, code: '١٢٣٤' }, status: 400, error: CODE },
  { name: 'code a number', body: { ...sms, code: 1234 }, status: 400, error: CODE },
  { name: 'code null', body: { ...sms, code: null }, status: 400, error: CODE },
  { name: 'code empty', body: { ...sms, code: '' }, status: 400, error: CODE },

  // order: channel, recipient, message, subject, expires_in, code
  {
    name: 'order: channel first',
    body: { channel: 'fax', recipient: 1, message: '', subject: '', expires_in: 1, code: '1' },
    status: 400,
    error: CHANNEL,
  },
  {
    name: 'order: recipient before message',
    body: { channel: 'sms', recipient: 1, message: '', subject: '', expires_in: 1, code: '1' },
    status: 400,
    error: PHONE,
  },
  {
    name: 'order: message before subject',
    body: { ...email, message: 'no placeholder', subject: '', expires_in: 1, code: '1' },
    status: 400,
    error: PLACEHOLDER,
  },
  { name: 'order: subject before expires_in', body: { ...email, subject: '', expires_in: 1, code: '1' }, status: 400, error: SUBJECT },
  { name: 'order: expires_in before code', body: { ...email, expires_in: 1, code: '1' }, status: 400, error: EXPIRES_IN },
  { name: 'order: message length before placeholder', body: { ...sms, message: '' }, status: 400, error: MESSAGE },

  // unknown fields
  { name: 'unknown fields ignored', body: { ...sms, priority: 'high', verification_id: 'x', extra: { a: [1] } }, status: 200 },
]

for (const row of rows) {
  test(`send: ${row.name} -> ${row.status}`, async () => {
    const r = await h.call('/api/v1/send', row.body, { raw: row.raw })
    expect(r.status).toBe(row.status)
    if (row.status === 400) {
      expect(r.json).toEqual({ error: row.error!, request_id: r.headers.get('x-request-id')! })
      // A rejected request consumes nothing and delivers nothing.
      expect((await h.server.admin.balance()).balance).toBe(1)
      expect(h.delivery.sent).toHaveLength(0)
    } else {
      expect(r.json.success).toBe(true)
      expect((await h.server.admin.balance()).balance).toBe(0)
      expect(h.delivery.sent).toHaveLength(1)
    }
  })
}

test('a custom code is the one delivered, and it verifies', async () => {
  const sent = await h.send({ ...sms, code: '0048213579' })
  expect(sent.status).toBe(200)
  expect(h.delivery.sent.map((m) => m.text)).toEqual(['Your verification code is: 0048213579'])
  const wrong = await h.verify({ verification_id: sent.json.verification_id, code: '48213579' })
  expect(wrong.json.message).toBe('Invalid code')
  const ok = await h.verify({ verification_id: sent.json.verification_id, code: '0048213579' })
  expect(ok.json).toMatchObject({ success: true, verified: true, message: 'Code verified successfully' })
})

test('a message with LF is delivered with the LF kept', async () => {
  const sent = await h.send({ ...sms, message: 'Code:\n{code}', code: '4321' })
  expect(sent.status).toBe(200)
  expect(h.delivery.sent[0]!.text).toBe('Code:\n4321')
})
