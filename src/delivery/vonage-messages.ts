/**
 * WhatsApp through Vonage's Messages API (docs/delivery.md#whatsapp-through-vonage):
 * `POST {messages_base_url}/v1/messages` with the application's JWT and a
 * `custom` message, which Vonage hands to WhatsApp as it is: the approved
 * authentication template (whatsapp-provider.ts templateMessage) in the
 * language nearest the send, with `policy: "deterministic"` as Vonage's
 * custom-object example gives it, and the verification id as `client_ref`.
 * Vonage answers `202 { message_uuid }`. Its status webhooks carry a JWT
 * (HS256, signed with the account's signature secret) in `Authorization`,
 * whose `payload_hash` claim is the SHA-256 of the body.
 */
import { createHash, createHmac } from 'node:crypto'
import type { OutboundMessage, ReceiptState } from '../otp/types.ts'
import { post } from './http.ts'
import { ProviderMisconfiguredError, type Accepted } from './provider.ts'
import { receiptObject, sameSecret, type ReceiptReading, type ReceiptRequest } from './receipts.ts'
import { templateLanguage } from './template-language.ts'
import { templateMessage } from './whatsapp-provider.ts'
import { safeTitle } from './whatsapp-receipts.ts'

export interface VonageWhatsapp {
  from: string
  template: string
  languages: string[]
  baseUrl: string
}

/** Sends `m` as the WhatsApp authentication template; `jwt` signs the request as the application. */
export async function sendVonageWhatsapp(name: string, w: VonageWhatsapp, jwt: string, m: OutboundMessage, signal: AbortSignal): Promise<Accepted> {
  const language = templateLanguage(m.locale, w.languages)
  const { type, template } = templateMessage(w.template, language, m.code) as { type: string; template: { language: Record<string, string> } }
  const body = {
    message_type: 'custom',
    channel: 'whatsapp',
    to: m.recipient.replace(/^\+/, ''),
    from: w.from,
    custom: { type, template: { ...template, language: { policy: 'deterministic', ...template.language } } },
    client_ref: m.verificationId,
  }
  const res = await post(
    `${w.baseUrl}/v1/messages`,
    { headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) },
    signal,
  )
  const uuid = (res.json as { message_uuid?: unknown } | undefined)?.message_uuid
  if (res.status >= 200 && res.status < 300 && typeof uuid === 'string' && uuid !== '') return { ref: uuid, language }
  throw vonageWhatsappError(name, res.status, res.json)
}

/**
 * Vonage's answer, mapped as Meta's are (docs/delivery.md#whatsapp-errors): a
 * refused JWT is the application's setup, a 422 the template's (Vonage checks
 * the custom object against WhatsApp's rules); throttling and server errors
 * try the next provider. A number not on WhatsApp shows only in the status
 * webhook (`rejected`), after the send.
 */
function vonageWhatsappError(name: string, status: number, json: unknown): Error {
  const code = errorCode(json)
  const what = `vonage messages answered ${status}${code ? ` (error ${code})` : ''}`
  const key = (k: string) => `providers.${name}.${k}`
  if (status === 401 || status === 403)
    return new ProviderMisconfiguredError(`${what}; check ${key('application_id')} and ${key('private_key_file')}`, key('application_id'))
  if (status === 422)
    return new ProviderMisconfiguredError(
      `${what}; check ${key('whatsapp_template')}, ${key('whatsapp_languages')} and ${key('whatsapp_from')}`,
      key('whatsapp_template'),
    )
  return new Error(what)
}

/** The number at the end of an error's `type` URL (`…/messages#1340`), Vonage's error code. */
function errorCode(json: unknown): string | undefined {
  const type = (json as { type?: unknown } | undefined)?.type
  const m = typeof type === 'string' ? /#([0-9]{1,10})$/.exec(type) : null
  return m?.[1]
}

/** Messages API statuses: `submitted` is acceptance, `read` implies delivered; `rejected` and `undeliverable` are final. */
const MESSAGES_STATES = new Map<string, ReceiptState | 'accepted'>([
  ['submitted', 'accepted'],
  ['delivered', 'delivered'],
  ['read', 'delivered'],
  ['rejected', 'undelivered'],
  ['undeliverable', 'undelivered'],
])

/**
 * A Messages API status webhook: the JWT in `Authorization` must be HS256,
 * signed with the signature secret, and its `payload_hash` the hex SHA-256
 * of the raw body; then the status, by `client_ref` (the verification id)
 * or `message_uuid`.
 */
export function readMessagesStatus(secret: string | undefined, req: ReceiptRequest): ReceiptReading {
  const auth = req.headers.get('authorization') ?? ''
  const token = auth.startsWith('Bearer ') ? auth.slice(7).trim() : ''
  const claims = secret ? verifyHs256(token, secret) : null
  const hash = createHash('sha256').update(req.bytes).digest('hex')
  if (claims === null || typeof claims.payload_hash !== 'string' || !sameSecret(claims.payload_hash.toLowerCase(), hash)) return { kind: 'forged' }
  const parsed = receiptObject(req)
  if (!parsed.ok) return parsed.reading
  const b = parsed.body
  const state = typeof b.status === 'string' ? (MESSAGES_STATES.get(b.status) ?? null) : null
  const text = (v: unknown) => (typeof v === 'string' && v !== '' && v.length <= 512 ? v : null)
  const e = b.error as { type?: unknown; title?: unknown } | undefined
  const error =
    state === 'undelivered' && e && typeof e === 'object' ? { code: errorCode(e) ?? '', title: typeof e.title === 'string' ? safeTitle(e.title) : '' } : null
  return { kind: 'batch', items: [{ verificationId: text(b.client_ref), ref: text(b.message_uuid), state, error }] }
}

/** The claims of an HS256 JWT signed with `secret`, or null (constant-time comparison of the signature). */
function verifyHs256(token: string, secret: string): Record<string, unknown> | null {
  const parts = token.split('.')
  if (parts.length !== 3) return null
  const [head, payload, signature] = parts as [string, string, string]
  try {
    const header = JSON.parse(Buffer.from(head, 'base64url').toString('utf8')) as { alg?: unknown }
    if (header.alg !== 'HS256') return null
    const expected = createHmac('sha256', secret).update(`${head}.${payload}`).digest('base64url')
    if (!sameSecret(signature, expected)) return null
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
    return typeof claims === 'object' && claims !== null && !Array.isArray(claims) ? (claims as Record<string, unknown>) : null
  } catch {
    return null
  }
}
