/**
 * The `vonage` provider: SMS through the SMS API (POST /sms/json, api_key and
 * api_secret), voice through the Voice API (POST /v1/calls, a JWT signed with
 * the application's key, an NCCO `talk` action: `talkAction`). Numbers go
 * without the "+". With `server.public_url` set, an SMS asks for a receipt and
 * carries the verification id as `client-ref`; Vonage signs receipts with the
 * signature secret (SHA-256 HMAC): `sig` is the hex HMAC of `&name=value` for
 * every other parameter, sorted by name, `&` and `=` in values turned into `_`.
 * WhatsApp goes through the Messages API (vonage-messages.ts), whose status
 * webhooks arrive at the same receipt URL, signed with a JWT.
 */
import { smsSize } from '../lib/sms-encoding.ts'
import { createHmac, createPrivateKey, createSign, type KeyObject } from 'node:crypto'
import type { Channel, OutboundMessage, ReceiptState } from '../otp/types.ts'
import { randomUuid } from '../lib/random.ts'
import { post, vendorCode, xmlEscape } from './http.ts'
import type { ProviderOptions } from './options.ts'
import { RecipientRejectedError, type Accepted, type Provider } from './provider.ts'
import { TEMPLATE_LANGUAGE } from './template-language.ts'
import { readMessagesStatus, sendVonageWhatsapp, type VonageWhatsapp } from './vonage-messages.ts'
import { voiceLanguage, voiceParts } from './voice-script.ts'
import { receiptParams, sameSecret, single, type ReceiptReader, type ReceiptRequest, type ReceiptReading } from './receipts.ts'

export interface VonageSettings {
  apiKey?: string
  apiSecret?: string
  applicationId?: string
  privateKey?: KeyObject
  /** The account's signature secret, which signs delivery receipts. */
  signatureSecret?: string
  from: string
  voiceFrom: string
  baseUrl: string
  voiceBaseUrl: string
  /** WhatsApp through the Messages API (vonage-messages.ts); absent when not configured. */
  whatsapp?: VonageWhatsapp
}

/** SMS API status 6: "unrecognized number prefix", the number itself is invalid. */
export const VONAGE_RECIPIENT_STATUSES = new Set(['6'])

export function readVonage(o: ProviderOptions, used: Channel[], receipts = false): VonageSettings {
  const sms = used.includes('sms')
  const voice = used.includes('voice')
  const whatsapp = used.includes('whatsapp')
  // The Voice and Messages APIs both take the application's JWT.
  const wa = !voice && whatsapp ? 'this provider sends WhatsApp through the Messages API, which needs' : false
  const apiKey = o.string('api_key', { required: sms && "this provider sends SMS, which needs the account's API key" })
  const apiSecret = o.secret(
    'api_secret_env',
    sms && 'this provider sends SMS: name the environment variable holding the API secret, such as VONAGE_API_SECRET',
  )
  const applicationId = o.string('application_id', {
    required: voice ? 'this provider places calls, which needs a Voice application id' : wa && `${wa} an application id`,
    test: (v) => (/^[0-9a-fA-F-]{36}$/.test(v) ? undefined : "must be the application's UUID"),
  })
  const pem = o.file(
    'private_key_file',
    voice ? "this provider places calls, which needs the Voice application's private key file" : wa && `${wa} the application's private key file`,
  )
  let privateKey: KeyObject | undefined
  if (pem !== undefined) {
    try {
      privateKey = createPrivateKey(pem)
      if (privateKey.asymmetricKeyType !== 'rsa') throw new Error('not RSA')
    } catch {
      privateKey = undefined
      o.problem(`${o.key('private_key_file')} does not hold an RSA private key in PEM form`)
    }
  }
  const signatureSecret = o.secret(
    'signature_secret_env',
    receipts &&
      (sms || whatsapp) &&
      "server.public_url turns delivery receipts on, and Vonage signs them with the account's signature secret: name the environment variable holding it, such as VONAGE_SIGNATURE_SECRET",
  )
  const from = o.string('from', { required: (sms || voice || !whatsapp) && 'the sender: a Vonage number (digits) or an alphanumeric sender ID' }) ?? ''
  const voiceFrom = o.string('voice_from') ?? from
  if (voice && from !== '' && !/^\+?[1-9]\d{6,14}$/.test(voiceFrom)) {
    o.problem(
      `${o.key(o.has('voice_from') ? 'voice_from' : 'from')} must be a Vonage number to place calls (got ${JSON.stringify(voiceFrom)}); set voice_from to one of your Vonage numbers`,
    )
  }
  const baseUrl = o.url('base_url', 'https://rest.nexmo.com')
  const voiceBaseUrl = o.url('voice_base_url', 'https://api.nexmo.com')
  const waSettings = readVonageWhatsapp(o, whatsapp)
  return {
    apiKey,
    apiSecret,
    applicationId,
    privateKey,
    signatureSecret,
    from: from.replace(/^\+/, ''),
    voiceFrom: voiceFrom.replace(/^\+/, ''),
    baseUrl,
    voiceBaseUrl,
    ...(waSettings ? { whatsapp: waSettings } : {}),
  }
}

/** The WhatsApp keys: required when a channel list names the provider for WhatsApp. */
function readVonageWhatsapp(o: ProviderOptions, used: boolean): VonageWhatsapp | undefined {
  const need = (what: string) => used && `this provider sends WhatsApp: ${what}`
  const from = o.string('whatsapp_from', {
    required: need('your WhatsApp Business number at Vonage, such as "14157386102"'),
    test: (v) => (/^\+?[1-9]\d{6,14}$/.test(v) ? undefined : 'must be a phone number in E.164 form, with or without "+"'),
  })
  const template = o.string('whatsapp_template', {
    required: need('the name of the approved AUTHENTICATION template, such as "otp_code"'),
    test: (v) => (/^[a-z0-9_]{1,512}$/.test(v) ? undefined : 'must be a template name: lower-case letters, digits and underscores'),
  })
  const languages = o.stringList('whatsapp_languages', {
    required: need('the template\'s approved language codes, the default first, such as ["en_US", "es"]'),
    test: (v) => (TEMPLATE_LANGUAGE.test(v) ? undefined : 'is not a WhatsApp language code such as "en_US" or "es"'),
  })
  const baseUrl = o.url('messages_base_url', 'https://api.nexmo.com')
  if (from === undefined || template === undefined || languages === undefined) return undefined
  return { from: from.replace(/^\+/, ''), template, languages, baseUrl }
}

export class VonageProvider implements Provider {
  readonly type = 'vonage'

  constructor(
    readonly name: string,
    private readonly s: VonageSettings,
    private readonly now: () => number,
    /** This provider's receipt URL (delivery/receipts.ts receiptUrl), when receipts are on. */
    private readonly receipts?: string,
  ) {}

  async send(m: OutboundMessage, signal: AbortSignal): Promise<Accepted | undefined> {
    if (m.channel === 'whatsapp') return sendVonageWhatsapp(this.name, this.s.whatsapp!, this.jwt(), m, signal)
    await (m.channel === 'voice' ? this.call(m, signal) : this.sms(m, signal))
    return undefined
  }

  private async sms(m: OutboundMessage, signal: AbortSignal): Promise<void> {
    const form = new URLSearchParams({
      api_key: this.s.apiKey ?? '',
      api_secret: this.s.apiSecret ?? '',
      from: this.s.from,
      to: m.recipient.replace(/^\+/, ''),
      text: m.text,
    })
    // Unicode only when the text needs UCS-2: GSM-7's own accented letters (é, ñ, ü) go as `text`, in the segments otp/messages counted.
    if (smsSize(m.text).encoding === 'UCS-2') form.set('type', 'unicode')
    if (this.receipts) {
      form.set('status-report-req', '1')
      form.set('callback', this.receipts)
      form.set('client-ref', m.verificationId)
    }
    const res = await post(
      `${this.s.baseUrl}/sms/json`,
      { headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: form.toString() },
      signal,
    )
    if (res.status < 200 || res.status >= 300) throw new Error(`vonage sms answered ${res.status}`)
    const first = (res.json as { messages?: unknown[] } | undefined)?.messages?.[0]
    const status = vendorCode(first, 'status')
    if (status === '0') return
    const what = `vonage sms status ${status ?? 'missing'}`
    if (status && VONAGE_RECIPIENT_STATUSES.has(status)) throw new RecipientRejectedError(what)
    throw new Error(what)
  }

  private async call(m: OutboundMessage, signal: AbortSignal): Promise<void> {
    const body = {
      to: [{ type: 'phone', number: m.recipient.replace(/^\+/, '') }],
      from: { type: 'phone', number: this.s.voiceFrom },
      ncco: [talkAction(m)],
    }
    const res = await post(
      `${this.s.voiceBaseUrl}/v1/calls`,
      {
        headers: { authorization: `Bearer ${this.jwt()}`, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
      },
      signal,
    )
    if (res.status >= 200 && res.status < 300) return
    const what = `vonage calls answered ${res.status}`
    const invalid = (res.json as { invalid_parameters?: { name?: unknown }[] } | undefined)?.invalid_parameters
    if (res.status === 400 && invalid?.some((p) => typeof p.name === 'string' && p.name.startsWith('to')))
      throw new RecipientRejectedError(`${what} (invalid "to")`)
    throw new Error(what)
  }

  /** RS256 JWT for the Voice API: application_id, iat, jti, exp (5 minutes). */
  jwt(): string {
    const iat = Math.floor(this.now() / 1000)
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
    const input = `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64({ application_id: this.s.applicationId, iat, jti: randomUuid(), exp: iat + 300 })}`
    const signature = createSign('RSA-SHA256').update(input).sign(this.s.privateKey!).toString('base64url')
    return `${input}.${signature}`
  }
}

/**
 * The NCCO `talk` action: SSML with the words XML-escaped (a template holding
 * `<`, `&` or quotes cannot add markup), a 1-second break around the code and
 * a 500 ms break between its digits, ending on a 1-second break so that the
 * second reading (`loop: 2`) stands apart. `language` is the message's
 * (voice-script.ts), absent when Vonage has none (its default, US English);
 * the default style (0) is used, whose voices take SSML.
 */
export function talkAction(m: Pick<OutboundMessage, 'text' | 'code' | 'locale'>): { action: 'talk'; text: string; language?: string; loop: number } {
  const ssml = voiceParts(m.text, m.code)
    .map((p) => (p.kind === 'words' ? xmlEscape(p.text) : p.digits.join("<break time='500ms'/>")))
    .join("<break time='1s'/>")
  const language = voiceLanguage(m.locale, 'vonage')
  return { action: 'talk', text: `<speak>${ssml}<break time='1s'/></speak>`, ...(language ? { language } : {}), loop: 2 }
}

/** The SMS API's signature of a parameter set (see the module comment), upper-case hex. */
export function vonageSignature(secret: string, params: Map<string, string[]>): string {
  let data = ''
  for (const key of [...params.keys()].filter((k) => k !== 'sig').sort()) data += `&${key}=${(params.get(key) ?? []).join(',').replace(/[&=]/g, '_')}`
  return createHmac('sha256', secret).update(data, 'utf8').digest('hex').toUpperCase()
}

/** DLR statuses that are final; `accepted`, `buffered`, `unknown` and the rest change nothing. */
const VONAGE_STATES = new Map<string, ReceiptState>([
  ['delivered', 'delivered'],
  ['failed', 'undelivered'],
  ['rejected', 'undelivered'],
  ['expired', 'undelivered'],
])

export function vonageReceiptReader(s: VonageSettings): ReceiptReader {
  return {
    read(req: ReceiptRequest): ReceiptReading {
      // The Messages API's status webhooks (WhatsApp) carry a JWT; the SMS API's receipts a `sig`.
      if ((req.headers.get('authorization') ?? '').startsWith('Bearer ')) return readMessagesStatus(s.signatureSecret, req)
      const params = receiptParams(req)
      const given = single(params, 'sig')
      if (!s.signatureSecret || given === null || !sameSecret(given.toUpperCase(), vonageSignature(s.signatureSecret, params))) return { kind: 'forged' }
      const status = single(params, 'status')
      return { kind: 'signed', verificationId: single(params, 'client-ref'), state: status === null ? null : (VONAGE_STATES.get(status) ?? null) }
    },
  }
}
