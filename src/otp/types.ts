/** Domain types shared by the otp services and the ports they declare. */
import type { SmsEncoding } from '../lib/sms-encoding.ts'

export const CHANNELS = ['sms', 'email', 'voice', 'whatsapp'] as const
export type Channel = (typeof CHANNELS)[number]

/**
 * One step of a send's workflow (docs/api.md#workflows): the channel tried and
 * the recipient it goes to (the step's own, or the send's `recipient`).
 */
export interface WorkflowStep {
  channel: Channel
  recipient: string
}

/** A workflow's `channel_timeout` when the send names none (seconds). */
export const DEFAULT_CHANNEL_TIMEOUT = 60
export const MAX_WORKFLOW_STEPS = 3

export type KeyStatus = 'active' | 'disabled' | 'revoked'

export interface ApiKey {
  id: number
  accountId: number
  prefix: string
  status: KeyStatus
}

export interface StoredKey extends ApiKey {
  keyHash: string
  /** When a rotated key stops working (docs/operating.md#rotating-a-key); null: never. */
  expiresAt: number | null
}

export type TestMode = 'success' | 'fail' | 'expired'

/**
 * Where a charged send's delivery stands: `sending` is recorded with the debit
 * before the provider is called; then `accepted` (a provider took it),
 * `failed` (refunded, out of use), or `unknown` (the process stopped during
 * the delivery: refunded at recovery, the code stays verifiable since it may
 * have arrived), then from a delivery receipt (docs/api.md#delivery-receipts) the
 * final `delivered` or `undelivered`, which nothing changes again. Null for
 * test recipients.
 */
export type DeliveryState = 'sending' | 'accepted' | 'failed' | 'unknown' | 'delivered' | 'undelivered'

/** What a delivery receipt can record: a final status. */
export type ReceiptState = 'delivered' | 'undelivered'

/** A vendor's error of an `undelivered` receipt, as it gave it (code and title; never a digit of the number). */
export interface VendorError {
  code: string
  title: string
}

/** What the provider that took a message said about it (delivery/provider.ts Accepted). */
export interface DeliveryDetail {
  /** The vendor's id of the message (Meta's `wamid.…`), which its receipts name. */
  ref: string | null
  /** The template language a WhatsApp provider used (docs/delivery.md#whatsapp). */
  language: string | null
}

export interface Verification {
  /** The store's row number, which `id` carries (lib/verification-id.ts). */
  seq: number
  id: string
  keyId: number
  accountId: number
  channel: Channel
  /** HMAC of the account and the recipient's counting identity (recipient-identity.ts), cut to RECIPIENT_HASH_BYTES: the subject of the per-recipient limits and the failure cap. */
  recipientHash: Uint8Array
  recipientMask: string
  /** HMAC of the id and the code. */
  codeHash: Uint8Array
  testMode: TestMode | null
  /** `failed`: no provider took it (refunded); `canceled`: withdrawn by the client. Either is out of use (verify answers 404). */
  status: 'active' | 'failed' | 'canceled'
  charged: boolean
  createdAt: number
  expiresAt: number
  usedAt: number | null
  failedAttempts: number
  lockedUntil: number | null
  delivery: DeliveryState | null
  /** The provider that took it (`accepted`). */
  deliveryProvider: string | null
  deliveryUpdatedAt: number | null
  /** An SMS's encoding and segments as sent (docs/messages.md#encoding-and-segments); absent for other channels and test recipients. */
  sms?: SmsInfo
  /** The destination's country for sms and voice (ISO 3166-1 alpha-2, `ZZ` unknown); null for email and test recipients. Absent: null. */
  country?: string | null
  /** The fraud guard rule monitor mode let this send through in spite of; absent or null otherwise. */
  fraudMonitored?: string | null
  /** The vendor's id of the message and the template language used (WhatsApp), when the provider gave them; absent: null. */
  deliveryRef?: string | null
  deliveryLanguage?: string | null
  /** The vendor's error of an `undelivered` receipt; absent: null. */
  deliveryError?: VendorError | null
  /** The hook whose identity server checks this code (docs/integrations.md#what-otpd-records); absent when otpd checks it. */
  checkedBy?: string
}

export interface SmsInfo {
  encoding: SmsEncoding
  segments: number
}

/** A send request that passed validation. */
export interface SendInput {
  channel: Channel
  recipient: string
  message?: string
  subject?: string
  expiresIn?: number
  code?: string
  /** The end user's IP address, canonical (fraud guard rule 2 counts it as otp/fraud.ts ipScope says). */
  ip?: string
  /** The language of the text (docs/messages.md#how-a-text-is-chosen), as the message catalogue resolved the request's `locale`. */
  locale?: string
  /** Android's SMS Retriever hash (11 characters of base64), appended to an SMS (docs/messages.md#autofill). */
  appHash?: string
  /** A hook's delivery (docs/integrations.md): the hook whose identity server checks the code. */
  checkedBy?: string
  /** A whole text from a hook, delivered as given (`message` holds it; no `{code}` in it, no autofill line). */
  wholeText?: boolean
  /** A link the email carries under the code (Supabase's confirmation link). */
  link?: string
  /**
   * The send's workflow (docs/api.md#workflows), 1 to 3 steps; `channel` and
   * `recipient` are then its first step's. Absent: a plain send.
   */
  workflow?: WorkflowStep[]
  /** Seconds a workflow's step is given before the next one starts; with `workflow` only. */
  channelTimeout?: number
}

export interface VerifyInput {
  verificationId: string
  code: string
}

/**
 * What a delivery provider is handed: the final text (the code already in it)
 * and, apart, the code itself and the text's language, so that voice can read
 * the code digit by digit in that language and e-mail can set it in large type.
 * `code` is a secret like the code in `text`: never logged, never stored.
 */
export interface OutboundMessage {
  channel: Channel
  recipient: string
  text: string
  subject: string
  /** BCP 47 tag of the text's language, such as `en` or `pt-BR`. */
  locale: string
  /** The code in clear, as `text` carries it (voice: digit by digit); empty for a hook's whole text (docs/integrations.md). */
  code: string
  verificationId: string
  expiresAt: number
  /** A link the text carries on its last line (a hook's confirmation link: docs/integrations.md); an email shows it as a link. */
  link?: string
}

export interface Limits {
  keyRequestsPerMinute: number
  recipientPerMinute: number
  recipientPerHour: number
  recipientPerDay: number
  maxFailedAttempts: number
  lockoutSeconds: number
  recipientFailuresPerDay: number
}

export const DEFAULT_LIMITS: Limits = {
  keyRequestsPerMinute: 120,
  recipientPerMinute: 2,
  recipientPerHour: 15,
  recipientPerDay: 50,
  maxFailedAttempts: 5,
  lockoutSeconds: 900,
  recipientFailuresPerDay: 100,
}
