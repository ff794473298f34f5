/**
 * Meta's webhook for the `whatsapp` provider (docs/delivery.md#whatsapp-receipts):
 * the subscription handshake (GET with `hub.mode=subscribe`, `hub.verify_token`
 * and `hub.challenge`) and the status notifications of the `messages` field,
 * signed `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body under
 * the app secret>`. One notification may carry several statuses, for several
 * messages, in any order; each names its message by id and, when otpd sent
 * one, by the verification id otpd gave as `biz_opaque_callback_data`.
 */
import { createHmac } from 'node:crypto'
import type { ReceiptState, VendorError } from '../otp/types.ts'
import { receiptObject, sameSecret, type ReceiptItem, type ReceiptReader, type ReceiptReading, type ReceiptRequest } from './receipts.ts'
import type { WhatsappSettings } from './whatsapp-provider.ts'

/** Meta's statuses: `sent` is a provider's acceptance, `read` implies delivered; `failed` is final. Others move nothing. */
const META_STATES = new Map<string, ReceiptState | 'accepted'>([
  ['sent', 'accepted'],
  ['delivered', 'delivered'],
  ['read', 'delivered'],
  ['failed', 'undelivered'],
])

/** `sha256=` and the hex HMAC of the raw bytes, as Meta signs a notification. */
export function metaSignature(appSecret: string, bytes: Uint8Array): string {
  return `sha256=${createHmac('sha256', appSecret).update(bytes).digest('hex')}`
}

export function whatsappReceiptReader(s: WhatsappSettings): ReceiptReader {
  return {
    handshake(query: URLSearchParams): string | null {
      const token = query.get('hub.verify_token')
      const challenge = query.get('hub.challenge')
      if (!s.verifyToken || query.get('hub.mode') !== 'subscribe' || token === null || challenge === null || challenge === '') return null
      return sameSecret(token, s.verifyToken) ? challenge : null
    },
    read(req: ReceiptRequest): ReceiptReading {
      const given = req.headers.get('x-hub-signature-256')
      if (!s.appSecret || given === null || !sameSecret(given.toLowerCase(), metaSignature(s.appSecret, req.bytes))) return { kind: 'forged' }
      const parsed = receiptObject(req)
      return parsed.ok ? { kind: 'batch', items: statusesOf(parsed.body as Json) } : parsed.reading
    },
  }
}

type Json = Record<string, unknown>
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.filter((x): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x)) : [])
const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' && v.length <= 512 ? v : null)

/** Every status of `entry[].changes[]` of the `messages` field; inbound messages and other fields are not receipts. */
function statusesOf(body: Json): ReceiptItem[] {
  const items: ReceiptItem[] = []
  for (const entry of list(body.entry)) {
    for (const change of list(entry.changes)) {
      if (change.field !== 'messages' || typeof change.value !== 'object' || change.value === null) continue
      for (const status of list((change.value as Json).statuses)) {
        const state = typeof status.status === 'string' ? (META_STATES.get(status.status) ?? null) : null
        items.push({
          verificationId: text(status.biz_opaque_callback_data),
          ref: text(status.id),
          state,
          error: state === 'undelivered' ? errorOf(status.errors) : null,
        })
      }
    }
  }
  return items
}

/** Meta's code and title of a failed status; the title loses any run of digits that could be part of a number. */
function errorOf(errors: unknown): VendorError | null {
  const first = list(errors)[0]
  if (first === undefined) return null
  const code = typeof first.code === 'number' || typeof first.code === 'string' ? String(first.code).slice(0, 20) : ''
  const title = typeof first.title === 'string' ? safeTitle(first.title) : ''
  return code === '' && title === '' ? null : { code, title }
}

export function safeTitle(title: string): string {
  return title.replace(/\+?[0-9][0-9 ()-]{4,}[0-9]/g, '…').slice(0, 200)
}
