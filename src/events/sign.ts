/**
 * Standard Webhooks signatures (symmetric, `v1`): base64 HMAC-SHA256 of
 * `<id>.<timestamp>.<body>`, keyed by the base64-decoded part of the
 * `whsec_` secret. Several signatures are space-separated, newest first.
 */
import { createHmac } from 'node:crypto'
import { SECRET_PREFIX } from '../otp/webhooks.ts'

export function signature(secret: string, id: string, timestamp: number, body: string): string {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('a webhook secret does not start with whsec_')
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`
}

/** The three headers of one attempt; `secrets` newest first. */
export function signedHeaders(secrets: string[], id: string, timestamp: number, body: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'otpd-webhooks',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => signature(s, id, timestamp, body)).join(' '),
  }
}
