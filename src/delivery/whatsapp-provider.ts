/**
 * The `whatsapp` provider: Meta's WhatsApp Cloud API (docs/delivery.md#whatsapp).
 * A send is `POST {base_url}/{api_version}/{phone_number_id}/messages` with
 * the access token as a Bearer token and the approved authentication template:
 * the code as the body's parameter and as the copy-code button's (`sub_type`
 * `url`, `index` "0"), in the template language nearest the send's
 * (template-language.ts), and the verification id as
 * `biz_opaque_callback_data`, which Meta echoes in its status notifications.
 * Meta's answer names the message (`messages[0].id`, a `wamid.…`), which its
 * notifications name too (whatsapp-receipts.ts). Meta's error codes are mapped
 * to what otpd does next (whatsappError).
 */
import type { Channel, OutboundMessage } from '../otp/types.ts'
import { post } from './http.ts'
import type { ProviderOptions } from './options.ts'
import { ChannelUnreachableError, ProviderMisconfiguredError, type Accepted, type Provider } from './provider.ts'
import { TEMPLATE_LANGUAGE, templateLanguage } from './template-language.ts'

export interface WhatsappSettings {
  phoneNumberId: string
  accessToken: string
  template: string
  languages: string[]
  /** Checks status notifications (X-Hub-Signature-256); absent when receipts are off and it is not set. */
  appSecret?: string
  /** Answers Meta's subscription handshake (hub.verify_token). */
  verifyToken?: string
  baseUrl: string
  apiVersion: string
}

/** The Graph API version otpd was built and tested against. */
export const GRAPH_API_VERSION = 'v23.0'

/** A template's name as WhatsApp Manager allows it: lower-case letters, digits and underscores. */
const TEMPLATE_NAME = /^[a-z0-9_]{1,512}$/

export function readWhatsapp(o: ProviderOptions, _used: Channel[], receipts = false): WhatsappSettings {
  const phoneNumberId =
    o.string('phone_number_id', {
      required: "the WhatsApp Business phone number's id from WhatsApp Manager (API Setup), digits",
      test: (v) => (/^[0-9]{1,30}$/.test(v) ? undefined : 'must be the phone number id (digits), not the phone number'),
    }) ?? ''
  const accessToken = o.secret('access_token_env', 'name the environment variable holding the access token, such as WHATSAPP_ACCESS_TOKEN') ?? ''
  const template =
    o.string('template', {
      required: 'the name of the approved AUTHENTICATION template, such as "otp_code"',
      test: (v) => (TEMPLATE_NAME.test(v) ? undefined : 'must be a template name: lower-case letters, digits and underscores'),
    }) ?? ''
  const languages =
    o.stringList('languages', {
      required: 'the template\'s approved language codes, the default first, such as ["en_US", "es", "pt_BR"]',
      test: (v) => (TEMPLATE_LANGUAGE.test(v) ? undefined : 'is not a WhatsApp language code such as "en_US" or "es"'),
    }) ?? []
  const why = 'server.public_url turns delivery receipts on'
  const appSecret = o.secret(
    'app_secret_env',
    receipts && `${why}, and Meta signs them with the app secret: name the variable holding it, such as WHATSAPP_APP_SECRET`,
  )
  const verifyToken = o.secret(
    'verify_token_env',
    receipts && `${why}, and Meta's webhook subscription asks for a verify token: name the variable holding it, such as WHATSAPP_VERIFY_TOKEN`,
  )
  const baseUrl = o.url('base_url', 'https://graph.facebook.com')
  const apiVersion =
    o.string('api_version', {
      default: GRAPH_API_VERSION,
      test: (v) => (/^v[0-9]{1,3}\.[0-9]{1,3}$/.test(v) ? undefined : `must be a Graph API version such as "${GRAPH_API_VERSION}"`),
    }) ?? GRAPH_API_VERSION
  return { phoneNumberId, accessToken, template, languages, appSecret, verifyToken, baseUrl, apiVersion }
}

/** The template message: the code in the body and in the copy-code button (both required by Meta). */
export function templateMessage(name: string, language: string, code: string): Record<string, unknown> {
  const text = [{ type: 'text', text: code }]
  return {
    type: 'template',
    template: {
      name,
      language: { code: language },
      components: [
        { type: 'body', parameters: text },
        { type: 'button', sub_type: 'url', index: '0', parameters: text },
      ],
    },
  }
}

export class WhatsappProvider implements Provider {
  readonly type = 'whatsapp'

  constructor(
    readonly name: string,
    private readonly s: WhatsappSettings,
  ) {}

  async send(m: OutboundMessage, signal: AbortSignal): Promise<Accepted> {
    const language = templateLanguage(m.locale, this.s.languages)
    const body = {
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: m.recipient.replace(/^\+/, ''),
      ...templateMessage(this.s.template, language, m.code),
      biz_opaque_callback_data: m.verificationId,
    }
    const res = await post(
      `${this.s.baseUrl}/${this.s.apiVersion}/${this.s.phoneNumberId}/messages`,
      {
        headers: { authorization: `Bearer ${this.s.accessToken}`, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
      },
      signal,
    )
    const id = (res.json as { messages?: { id?: unknown }[] } | undefined)?.messages?.[0]?.id
    if (res.status >= 200 && res.status < 300 && typeof id === 'string' && id !== '') return { ref: id, language }
    throw whatsappError(this.name, res.status, res.json)
  }
}

/** Meta's error codes otpd gives a meaning (docs/delivery.md#whatsapp-errors): the title it logs, and what it does. */
const META_ERRORS: Record<string, { title: string; meaning: 'unreachable' | 'next' | `setting:${string}` }> = {
  '131026': { title: 'Message undeliverable (not a WhatsApp number, or its app cannot take it)', meaning: 'unreachable' },
  '130429': { title: 'Rate limit hit', meaning: 'next' },
  '131056': { title: 'Pair rate limit hit', meaning: 'next' },
  '131048': { title: 'Spam rate limit hit', meaning: 'next' },
  '131000': { title: 'Something went wrong', meaning: 'next' },
  '131016': { title: 'Service unavailable', meaning: 'next' },
  '132001': { title: 'Template does not exist (in this language)', meaning: 'setting:template and languages' },
  '132000': { title: 'Template parameter count mismatch: not an authentication template', meaning: 'setting:template' },
  '132012': { title: 'Template parameter format mismatch: not an authentication template', meaning: 'setting:template' },
  '132015': { title: 'Template is paused', meaning: 'setting:template' },
  '132016': { title: 'Template is disabled', meaning: 'setting:template' },
  '190': { title: 'Access token expired or invalid', meaning: 'setting:access_token_env' },
  '0': { title: 'Authentication failed', meaning: 'setting:access_token_env' },
  '10': { title: 'Permission denied', meaning: 'setting:access_token_env' },
  '131030': { title: 'Recipient not in the allowed list of a test phone number', meaning: 'setting:phone_number_id' },
}

/**
 * What Meta's error answer means: the recipient is not on WhatsApp (final for
 * the channel), the provider is misconfigured (the setting named), or
 * anything else (throttling, a server error): the next provider. The message
 * carries the status and Meta's code, never Meta's text, which may quote input.
 */
export function whatsappError(name: string, status: number, json: unknown): Error {
  const code = metaCode(json)
  const known = code === undefined ? undefined : META_ERRORS[code]
  const what = `whatsapp answered ${status}${code === undefined ? '' : ` (error ${code}${known ? `: ${known.title}` : ''})`}`
  if (known?.meaning === 'unreachable') return new ChannelUnreachableError(`${what}; the number cannot be reached on WhatsApp`)
  if (known?.meaning.startsWith('setting:')) {
    const keys = known.meaning.slice('setting:'.length)
    const first = keys.split(' ')[0]!
    return new ProviderMisconfiguredError(`${what}; check providers.${name}.${keys.replace(' and ', ` and providers.${name}.`)}`, `providers.${name}.${first}`)
  }
  if (status === 401) return new ProviderMisconfiguredError(`${what}; check providers.${name}.access_token_env`, `providers.${name}.access_token_env`)
  return new Error(what)
}

/** `error.code` of a Graph API error answer, as text. */
function metaCode(json: unknown): string | undefined {
  const code = (json as { error?: { code?: unknown } } | undefined)?.error?.code
  return typeof code === 'number' && Number.isInteger(code) ? String(code) : undefined
}
