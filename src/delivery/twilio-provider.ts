/**
 * The `twilio` provider: SMS through the Messages resource, voice through the
 * Calls resource with inline TwiML (`twiml`), form-encoded under
 * /2010-04-01/Accounts/{sid}/, HTTP Basic auth with the SID and auth token.
 * With `server.public_url` set, every message and call carries a
 * `StatusCallback`: the receipt URL with the verification id in its query,
 * which `X-Twilio-Signature` covers (HMAC-SHA1 under the auth token of the URL
 * and the sorted form parameters).
 */
import { createHmac } from 'node:crypto'
import type { Channel, OutboundMessage, ReceiptState } from '../otp/types.ts'
import { basicAuth, post, vendorCode, xmlEscape } from './http.ts'
import type { ProviderOptions } from './options.ts'
import { RecipientRejectedError, type Provider } from './provider.ts'
import { voiceLanguage, voiceParts } from './voice-script.ts'
import { receiptParams, sameSecret, single, type ReceiptReader, type ReceiptRequest, type ReceiptReading } from './receipts.ts'

export interface TwilioSettings {
  accountSid: string
  authToken: string
  from: string
  baseUrl: string
}

/** Twilio error codes that mean the number itself cannot receive: another provider would fail too. */
export const TWILIO_RECIPIENT_ERRORS = new Set(['21211', '21214', '21217', '21407', '21421', '21610', '21614', '21635'])

export function readTwilio(o: ProviderOptions, _used: Channel[]): TwilioSettings {
  const accountSid =
    o.string('account_sid', {
      required: 'the account SID from the Twilio console, "AC" and 32 hex digits',
      test: (v) => (/^AC[0-9a-fA-F]{32}$/.test(v) ? undefined : 'must be "AC" followed by 32 hex digits'),
    }) ?? ''
  const authToken = o.secret('auth_token_env', 'name the environment variable holding the auth token, such as TWILIO_AUTH_TOKEN') ?? ''
  const from =
    o.string('from', {
      required: 'a Twilio number in E.164 form such as "+15005550006", or an alphanumeric sender ID',
      test: (v) =>
        /^\+[1-9]\d{6,14}$/.test(v) || /^[A-Za-z0-9 ]{1,11}$/.test(v)
          ? undefined
          : 'must be an E.164 number or an alphanumeric sender ID of up to 11 characters',
    }) ?? ''
  const baseUrl = o.url('base_url', 'https://api.twilio.com')
  return { accountSid, authToken, from, baseUrl }
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
    const form = new URLSearchParams({ To: m.recipient, From: this.s.from })
    if (m.channel === 'voice') form.set('Twiml', twiml(m))
    else form.set('Body', m.text)
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
    throw new Error(what)
  }
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
      return { kind: 'signed', verificationId: new URL(req.url).searchParams.get('verification_id'), state }
    },
  }
}
