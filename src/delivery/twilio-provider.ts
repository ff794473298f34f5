/**
 * The `twilio` provider: SMS through the Messages resource, voice through the
 * Calls resource with inline TwiML (`twiml`), form-encoded under
 * /2010-04-01/Accounts/{sid}/, HTTP Basic auth with the SID and auth token.
 * With `server.public_url` set, every message and call carries a
 * `StatusCallback`: the receipt URL with the verification id in its query,
 * which `X-Twilio-Signature` covers (HMAC-SHA1 under the auth token of the URL
 * and the sorted form parameters). WhatsApp goes through the Messages resource
 * too (docs/delivery.md#whatsapp-through-twilio): `whatsapp:`-prefixed numbers and
 * an approved authentication Content template (`ContentSid`, the code as
 * `ContentVariables` `{"1": code}`).
 */
import { createHmac } from 'node:crypto'
import type { Channel, OutboundMessage, ReceiptState } from '../otp/types.ts'
import { basicAuth, post, vendorCode, xmlEscape } from './http.ts'
import type { ProviderOptions } from './options.ts'
import { ChannelUnreachableError, ProviderMisconfiguredError, RecipientRejectedError, type Provider } from './provider.ts'
import { voiceLanguage, voiceParts } from './voice-script.ts'
import { receiptParams, sameSecret, single, type ReceiptReader, type ReceiptRequest, type ReceiptReading } from './receipts.ts'

export interface TwilioSettings {
  accountSid: string
  authToken: string
  from: string
  baseUrl: string
  /** WhatsApp: the sender (E.164) and the approved authentication Content template (`HX…`). */
  whatsappFrom?: string
  whatsappContentSid?: string
}

/** Twilio error codes that mean the number itself cannot receive: another provider would fail too. */
export const TWILIO_RECIPIENT_ERRORS = new Set(['21211', '21214', '21217', '21407', '21421', '21610', '21614', '21635'])

export function readTwilio(o: ProviderOptions, used: Channel[]): TwilioSettings {
  const whatsapp = used.includes('whatsapp')
  const whatsappOnly = whatsapp && used.every((c) => c === 'whatsapp')
  const accountSid =
    o.string('account_sid', {
      required: 'the account SID from the Twilio console, "AC" and 32 hex digits',
      test: (v) => (/^AC[0-9a-fA-F]{32}$/.test(v) ? undefined : 'must be "AC" followed by 32 hex digits'),
    }) ?? ''
  const authToken = o.secret('auth_token_env', 'name the environment variable holding the auth token, such as TWILIO_AUTH_TOKEN') ?? ''
  const from =
    o.string('from', {
      required: !whatsappOnly && 'a Twilio number in E.164 form such as "+15005550006", or an alphanumeric sender ID',
      test: (v) =>
        /^\+[1-9]\d{6,14}$/.test(v) || /^[A-Za-z0-9 ]{1,11}$/.test(v)
          ? undefined
          : 'must be an E.164 number or an alphanumeric sender ID of up to 11 characters',
    }) ?? ''
  const baseUrl = o.url('base_url', 'https://api.twilio.com')
  const whatsappFrom = o.string('whatsapp_from', {
    required: whatsapp && 'this provider sends WhatsApp: your WhatsApp sender registered with Twilio, in E.164 form such as "+15005550006"',
    test: (v) => (/^\+[1-9]\d{6,14}$/.test(v) ? undefined : 'must be an E.164 number such as "+15005550006" (without "whatsapp:")'),
  })
  const whatsappContentSid = o.string('whatsapp_content_sid', {
    required: whatsapp && 'this provider sends WhatsApp: the SID of an approved whatsapp/authentication Content template, "HX" and 32 hex digits',
    test: (v) => (/^HX[0-9a-fA-F]{32}$/.test(v) ? undefined : 'must be "HX" followed by 32 hex digits'),
  })
  return { accountSid, authToken, from, baseUrl, whatsappFrom, whatsappContentSid }
}

/** Twilio's WhatsApp error codes otpd gives a meaning (docs/delivery.md#whatsapp-errors). */
const TWILIO_WHATSAPP_ERRORS: Record<string, { title: string; meaning: 'unreachable' | 'next' | `setting:${string}` }> = {
  '63003': { title: 'Channel could not find To address', meaning: 'unreachable' },
  '63024': { title: 'Invalid message recipient', meaning: 'unreachable' },
  '63018': { title: 'Rate limit exceeded for Channel', meaning: 'next' },
  '63012': { title: 'Channel provider returned an internal service error', meaning: 'next' },
  '63007': { title: "Twilio could not find a Channel with the specified 'From' address", meaning: 'setting:whatsapp_from' },
  '63016': { title: 'Failed to send freeform message: outside the allowed window (no approved template)', meaning: 'setting:whatsapp_content_sid' },
  '63027': { title: 'Template does not exist for a language and locale', meaning: 'setting:whatsapp_content_sid' },
  '21655': { title: 'The ContentSid is invalid', meaning: 'setting:whatsapp_content_sid' },
  '20003': { title: 'Authentication failed', meaning: 'setting:auth_token_env' },
}

/** A Twilio WhatsApp error's title, for a receipt's error (empty when otpd knows none). */
export function twilioErrorTitle(code: string): string {
  return TWILIO_WHATSAPP_ERRORS[code]?.title ?? ''
}

/** What a Twilio error answer to a WhatsApp message means, as whatsapp-provider.ts whatsappError does for Meta. */
function twilioWhatsappError(name: string, what: string, code: string | undefined): Error {
  const known = code === undefined ? undefined : TWILIO_WHATSAPP_ERRORS[code]
  const said = known ? `${what}: ${known.title}` : what
  if (known?.meaning === 'unreachable') return new ChannelUnreachableError(`${said}; the number cannot be reached on WhatsApp`)
  if (known?.meaning.startsWith('setting:')) {
    const setting = `providers.${name}.${known.meaning.slice('setting:'.length)}`
    return new ProviderMisconfiguredError(`${said}; check ${setting}`, setting)
  }
  return new Error(said)
}

export class TwilioProvider implements Provider {
  readonly type = 'twilio'

  constructor(
    readonly name: string,
    private readonly s: TwilioSettings,
    /** This provider's receipt URL (delivery/receipts.ts receiptUrl), when receipts are on. */
    private readonly receipts?: string,
  ) {}

  async send(m: OutboundMessage, signal: AbortSignal): Promise<void> {
    const resource = m.channel === 'voice' ? 'Calls' : 'Messages'
    const form = m.channel === 'whatsapp' ? whatsappForm(m, this.s) : new URLSearchParams({ To: m.recipient, From: this.s.from })
    if (m.channel === 'voice') form.set('Twiml', twiml(m))
    else if (m.channel !== 'whatsapp') form.set('Body', m.text)
    if (this.receipts) form.set('StatusCallback', `${this.receipts}?verification_id=${encodeURIComponent(m.verificationId)}`)
    const res = await post(
      `${this.s.baseUrl}/2010-04-01/Accounts/${this.s.accountSid}/${resource}.json`,
      {
        headers: {
          authorization: basicAuth(this.s.accountSid, this.s.authToken),
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: form.toString(),
      },
      signal,
    )
    if (res.status >= 200 && res.status < 300) return
    const code = vendorCode(res.json, 'code')
    const what = `twilio ${resource} answered ${res.status}${code ? ` (error ${code})` : ''}`
    if (res.status === 400 && code && TWILIO_RECIPIENT_ERRORS.has(code)) throw new RecipientRejectedError(what)
    if (m.channel === 'whatsapp') throw twilioWhatsappError(this.name, what, code)
    throw new Error(what)
  }
}

/** A WhatsApp message: both numbers `whatsapp:`-prefixed, the Content template and its one variable, the code. */
function whatsappForm(m: OutboundMessage, s: TwilioSettings): URLSearchParams {
  return new URLSearchParams({
    To: `whatsapp:${m.recipient}`,
    From: `whatsapp:${s.whatsappFrom}`,
    ContentSid: s.whatsappContentSid ?? '',
    ContentVariables: JSON.stringify({ '1': m.code }),
  })
}

/**
 * The call: each run of words in one `<Say>`, each digit of the code in its
 * own `<Say>` with a `<Pause>` (1 second, the shortest TwiML has) between
 * them, and the whole said again after a pause. Every `<Say>` names the
 * message's language (voice-script.ts) and no voice, so Twilio uses its
 * default voice for that language. Text is XML-escaped: a template holding
 * `<`, `&` or quotes cannot add TwiML.
 */
export function twiml(m: Pick<OutboundMessage, 'text' | 'code' | 'locale'>): string {
  const language = voiceLanguage(m.locale, 'twilio')
  const say = (t: string) => `<Say${language ? ` language="${language}"` : ''}>${xmlEscape(t)}</Say>`
  const once = voiceParts(m.text, m.code)
    .map((p) => (p.kind === 'words' ? say(p.text) : p.digits.map(say).join(PAUSE)))
    .join(PAUSE)
  return `<Response>${once}${PAUSE}${once}</Response>`
}

const PAUSE = '<Pause length="1"/>'

/**
 * Twilio's request signature: base64 HMAC-SHA1, keyed by the auth token, of
 * the full URL followed by every parameter name and value, sorted by name
 * (several values of one name: each distinct value, sorted).
 */
export function twilioSignature(authToken: string, url: string, params: Map<string, string[]>): string {
  let data = url
  for (const key of [...params.keys()].sort()) {
    for (const value of [...new Set(params.get(key))].sort()) data += key + value
  }
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64')
}

/** Message statuses, then call statuses (voice), that are final; the others (queued, sent, ringing...) change nothing. */
const TWILIO_STATES = new Map<string, ReceiptState>([
  ['delivered', 'delivered'],
  // WhatsApp's read receipt: read implies delivered.
  ['read', 'delivered'],
  ['undelivered', 'undelivered'],
  ['failed', 'undelivered'],
])
const TWILIO_CALL_STATES = new Map<string, ReceiptState>([
  ['completed', 'delivered'],
  ['busy', 'undelivered'],
  ['no-answer', 'undelivered'],
  ['failed', 'undelivered'],
  ['canceled', 'undelivered'],
])

/** Twilio always posts its callbacks as a form. */
const FORM = new Headers({ 'content-type': 'application/x-www-form-urlencoded' })

export function twilioReceiptReader(s: TwilioSettings): ReceiptReader {
  return {
    read(req: ReceiptRequest): ReceiptReading {
      const given = req.headers.get('x-twilio-signature')
      if (!given) return { kind: 'forged' }
      const params = receiptParams({ ...req, headers: FORM })
      if (!sameSecret(given, twilioSignature(s.authToken, req.url, params))) return { kind: 'forged' }
      const message = single(params, 'MessageStatus')
      const call = single(params, 'CallStatus')
      const state = message !== null ? (TWILIO_STATES.get(message) ?? null) : call !== null ? (TWILIO_CALL_STATES.get(call) ?? null) : null
      const code = single(params, 'ErrorCode')
      // Twilio's error code of an undelivered message is kept (its title when otpd knows it).
      const error = state === 'undelivered' && code !== null && /^[0-9]{1,10}$/.test(code) ? { code, title: twilioErrorTitle(code) } : null
      return { kind: 'signed', verificationId: new URL(req.url).searchParams.get('verification_id'), state, error }
    },
  }
}
