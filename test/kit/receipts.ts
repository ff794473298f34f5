/**
 * Receipts through the harness's recording delivery: with RECORDING_RECEIPTS
 * the recording provider's name is also a configured webhook provider, so a
 * receipt signed with RECEIPT_SECRET, as its gateway would sign it, reaches
 * the verifications that provider took (docs/api.md#delivery-receipts).
 */
import { webhookSignature } from '../../src/delivery/webhook-provider.ts'
import type { Harness, HarnessOptions, Result } from './harness.ts'

export const RECEIPT_SECRET = 'whsec-receipts-0123456789abcdef'

export const RECORDING_RECEIPTS = {
  config: {
    server: { public_url: 'https://otp.example.com' },
    providers: { recording: { type: 'webhook', url: 'http://127.0.0.1:9/otp', secret_env: 'RECEIPT_SECRET' } },
  },
  env: { RECEIPT_SECRET },
} satisfies HarnessOptions

/** The recording provider's signed receipt for `id`, signed at the harness's clock. */
export function postReceipt(h: Harness, id: string, status: string): Promise<Result> {
  const body = JSON.stringify({ verification_id: id, status })
  return h.call('/api/v1/receipts/recording', undefined, {
    key: null,
    raw: body,
    headers: { 'x-otpd-signature': webhookSignature(RECEIPT_SECRET, Math.floor(h.clock.now() / 1000), body) },
  })
}
