/**
 * The `webhook` provider: POSTs the message as JSON to any gateway, signed
 * with `X-Otpd-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret,
 * "<t>.<raw body>")>`. Any 2xx is success; 422 means the recipient itself is
 * invalid (not retried elsewhere); anything else is a failure.
 */
import { createHmac } from 'node:crypto'
import type { Channel, OutboundMessage } from '../otp/types.ts'
import { post } from './http.ts'
import type { ProviderOptions } from './options.ts'
import { RecipientRejectedError, type Provider } from './provider.ts'

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

/** `t=<seconds>,v1=<hex>`: what the receiver recomputes from the raw body (README "Delivery"). */
export function webhookSignature(secret: string, unixSeconds: number, rawBody: string): string {
  return `t=${unixSeconds},v1=${createHmac('sha256', secret).update(`${unixSeconds}.${rawBody}`).digest('hex')}`
}

export class WebhookProvider implements Provider {
  readonly type = 'webhook'

  constructor(
    readonly name: string,
    private readonly s: WebhookSettings,
    private readonly now: () => number,
  ) {}

  async send(m: OutboundMessage, signal: AbortSignal): Promise<void> {
    const body = JSON.stringify({
      channel: m.channel,
      recipient: m.recipient,
      message: m.text,
      verification_id: m.verificationId,
      expires_at: new Date(m.expiresAt).toISOString(),
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
