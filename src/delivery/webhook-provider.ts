/**
 * The `webhook` provider: POSTs the message as JSON to any gateway, signed with
 * `X-Otpd-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`.
 * Any 2xx is success; 422 means the recipient is invalid (not retried
 * elsewhere). With `server.public_url` set the body carries `receipt_url`, where
 * the gateway POSTs `{"verification_id", "status": "delivered" | "undelivered"}`
 * signed the same way; a signature over 5 minutes from otpd's clock is refused,
 * so a captured receipt cannot be replayed.
 */
import { createHmac } from 'node:crypto'
import type { Channel, OutboundMessage, ReceiptState } from '../otp/types.ts'
import { post } from './http.ts'
import type { ProviderOptions } from './options.ts'
import { RecipientRejectedError, type Provider } from './provider.ts'
import { receiptObject, sameSecret, type ReceiptReader, type ReceiptRequest, type ReceiptReading } from './receipts.ts'

/** How far a receipt's signature time may be from otpd's clock. */
export const RECEIPT_TOLERANCE_SECONDS = 300

export interface WebhookSettings {
  url: string
  secret: string
}

export function readWebhook(o: ProviderOptions, _used: Channel[]): WebhookSettings {
  if (!o.has('url')) o.problem(`${o.key('url')} is missing: the gateway's address, such as "https://sms-gateway.internal/otp"`)
  const url = o.url('url', '')
  const secret = o.secret('secret_env', 'name the environment variable holding the signing secret, such as OTPD_WEBHOOK_SECRET') ?? ''
  return { url, secret }
}

/** `t=<seconds>,v1=<hex>`: what the receiver recomputes from the raw body (docs/delivery.md#any-gateway-webhook). */
export function webhookSignature(secret: string, unixSeconds: number, rawBody: string): string {
  return `t=${unixSeconds},v1=${createHmac('sha256', secret).update(`${unixSeconds}.${rawBody}`).digest('hex')}`
}

export class WebhookProvider implements Provider {
  readonly type = 'webhook'

  constructor(
    readonly name: string,
    private readonly s: WebhookSettings,
    private readonly now: () => number,
    /** This provider's receipt URL (delivery/receipts.ts receiptUrl), when receipts are on. */
    private readonly receipts?: string,
  ) {}

  async send(m: OutboundMessage, signal: AbortSignal): Promise<void> {
    const body = JSON.stringify({
      channel: m.channel,
      recipient: m.recipient,
      message: m.text,
      verification_id: m.verificationId,
      expires_at: new Date(m.expiresAt).toISOString(),
      ...(this.receipts ? { receipt_url: this.receipts } : {}),
    })
    const res = await post(
      this.s.url,
      {
        headers: {
          'content-type': 'application/json',
          'user-agent': 'otpd-webhook/1',
          'x-otpd-signature': webhookSignature(this.s.secret, Math.floor(this.now() / 1000), body),
        },
        body,
      },
      signal,
    )
    if (res.status >= 200 && res.status < 300) return
    const what = `webhook answered ${res.status}`
    if (res.status === 422) throw new RecipientRejectedError(what)
    throw new Error(what)
  }
}

const WEBHOOK_STATES = new Map<string, ReceiptState>([
  ['delivered', 'delivered'],
  ['undelivered', 'undelivered'],
])

export function webhookReceiptReader(s: WebhookSettings, now: () => number): ReceiptReader {
  return {
    read(req: ReceiptRequest): ReceiptReading {
      const m = /^t=([0-9]{1,12}),v1=([0-9a-f]{64})$/.exec(req.headers.get('x-otpd-signature') ?? '')
      if (!m) return { kind: 'forged' }
      const t = Number(m[1])
      if (Math.abs(Math.floor(now() / 1000) - t) > RECEIPT_TOLERANCE_SECONDS) return { kind: 'forged' }
      if (!sameSecret(`t=${m[1]},v1=${m[2]}`, webhookSignature(s.secret, t, req.body))) return { kind: 'forged' }
      const parsed = receiptObject(req)
      if (!parsed.ok) return parsed.reading
      const { verification_id: id, status } = parsed.body
      return {
        kind: 'signed',
        verificationId: typeof id === 'string' ? id : null,
        state: typeof status === 'string' ? (WEBHOOK_STATES.get(status) ?? null) : null,
      }
    },
  }
}
