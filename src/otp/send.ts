/**
 * Send: create a verification and deliver its code (spec 4.1, DECISIONS.md
 * sections 1, 6, 7). Denials are returned values; only faults throw.
 */
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import { maskRecipient } from '../lib/mask.ts'
import { randomDigits } from '../lib/random.ts'
import type { Hasher } from '../lib/secrets.ts'
import type { VerificationIds } from '../lib/verification-id.ts'
import { DEFAULT_MESSAGE, DEFAULT_SUBJECT } from './messages.ts'
import type { KeyLimiter } from './key-limiter.ts'
import type { AccountSettings, CreditStore, Delivery, Transactor, VerificationStore } from './ports.ts'
import { normalizeRecipient, TEST_CODE, testModeOf } from './test-recipients.ts'
import type { ApiKey, Channel, Limits, SendInput, Verification } from './types.ts'
import { secondsUntil, waitForRoom } from './windows.ts'

export const HASH_PURPOSE_CODE = 'code'
export const HASH_PURPOSE_RECIPIENT = 'recipient'
export const DEFAULT_EXPIRES_IN = 300
/** 128 bits: no two recipients share a counter, at half the index of a whole HMAC. */
export const RECIPIENT_HASH_BYTES = 16

export type SendOutcome =
  | { kind: 'key_limited'; max: number; retryAfter: number }
  /** `test`: a test recipient (nothing delivered, nothing charged). */
  | { kind: 'sent'; verificationId: string; expiresAt: number; test: boolean }
  | { kind: 'recipient_limited'; max: number; period: string; retryAfter: number }
  | { kind: 'no_credits' }
  | { kind: 'delivery_failed' }

const WINDOWS = [
  { ms: 60_000, period: 'minute', limit: (l: Limits) => l.recipientPerMinute },
  { ms: 3_600_000, period: 'hour', limit: (l: Limits) => l.recipientPerHour },
  { ms: 86_400_000, period: '24 hours', limit: (l: Limits) => l.recipientPerDay },
] as const
const LONGEST_WINDOW_MS = 86_400_000

export interface SendDeps {
  tx: Transactor
  verifications: VerificationStore
  credits: CreditStore
  accounts: AccountSettings
  delivery: Delivery
  hasher: Hasher
  ids: VerificationIds
  clock: Clock
  logger: Logger
  limits: Limits
  limiter: KeyLimiter
  defaultCodeLength: number
}

export class SendService {
  constructor(private readonly d: SendDeps) {}

  async send(key: ApiKey, input: SendInput, requestId: string): Promise<SendOutcome> {
    const { d } = this
    const normalized = normalizeRecipient(input.channel, input.recipient)
    // Keyed by account: one account's counters never touch another's, and the hash alone names the subject.
    const recipientHash = d.hasher.digest(HASH_PURPOSE_RECIPIENT, `${key.accountId}:${normalized}`).subarray(0, RECIPIENT_HASH_BYTES)
    const testMode = testModeOf(input.channel, normalized)
    const expiresIn = (input.expiresIn ?? DEFAULT_EXPIRES_IN) * 1000

    // Inside the transaction that inserts it: the id carries the row's number.
    const build = (now: number, code: string): Verification => {
      const seq = d.verifications.nextSeq()
      const id = d.ids.make(seq)
      return {
        seq,
        id,
        keyId: key.id,
        accountId: key.accountId,
        channel: input.channel,
        recipientHash,
        recipientMask: maskRecipient(input.recipient),
        codeHash: d.hasher.digest(HASH_PURPOSE_CODE, `${id}:${code}`),
        testMode,
        status: 'active',
        charged: testMode === null,
        createdAt: now,
        expiresAt: testMode === 'expired' ? now : now + expiresIn,
        usedAt: null,
        failedAttempts: 0,
        lockedUntil: null,
      }
    }

    // The per-key limit is decided and counted inside the operation's transaction.
    const keyLimited = (): SendOutcome | null => {
      const a = d.limiter.admit(key.id)
      return a.ok ? null : { kind: 'key_limited', max: a.max, retryAfter: a.retryAfter }
    }

    if (testMode !== null) {
      // Test recipients: no delivery, no credit, no per-recipient limit; a custom code is ignored.
      const v = await d.tx.grouped((): SendOutcome | Verification => {
        const limited = keyLimited()
        if (limited) return limited
        const v = build(d.clock.now(), TEST_CODE)
        d.verifications.insert(v)
        return v
      })
      if ('kind' in v) return v
      return { kind: 'sent', verificationId: v.id, expiresAt: v.expiresAt, test: true }
    }

    let code = ''
    // Limits, credit and the new verification in one transaction: concurrent
    // sends cannot both see the last free slot or the last credit.
    const reserved = await d.tx.grouped((): SendOutcome | Verification => {
      const limited = keyLimited()
      if (limited) return limited
      const now = d.clock.now()
      code = input.code ?? randomDigits(d.accounts.codeLength(key.accountId) ?? d.defaultCodeLength)
      const times = d.verifications.recipientSendTimes(recipientHash, now - LONGEST_WINDOW_MS)
      let worst: { max: number; period: string; wait: number } | null = null
      for (const w of WINDOWS) {
        const max = w.limit(d.limits)
        const inWindow = times.filter((t) => t > now - w.ms)
        const wait = waitForRoom(inWindow, w.ms, max, now)
        if (wait > 0 && (worst === null || wait > worst.wait)) worst = { max, period: w.period, wait }
      }
      if (worst) return { kind: 'recipient_limited', max: worst.max, period: worst.period, retryAfter: secondsUntil(worst.wait) }
      const v = build(now, code)
      if (!d.credits.debit({ accountId: key.accountId, amount: 1, verificationId: v.id, at: now })) return { kind: 'no_credits' }
      d.verifications.insert(v)
      return v
    })
    if ('kind' in reserved) return reserved

    try {
      const receipt = await d.delivery.deliver({
        channel: input.channel,
        recipient: input.recipient,
        text: renderMessage(input.message ?? DEFAULT_MESSAGE, code, input.channel),
        subject: input.subject ?? DEFAULT_SUBJECT,
        verificationId: reserved.id,
        expiresAt: reserved.expiresAt,
      })
      d.logger.debug('delivered', { request_id: requestId, channel: input.channel, provider: receipt.provider, recipient: reserved.recipientMask })
    } catch (err) {
      await d.tx.grouped(() => {
        d.verifications.markFailed(reserved.seq)
        d.credits.post({ accountId: key.accountId, kind: 'refund', amount: 1, verificationId: reserved.id, at: d.clock.now() })
      })
      d.logger.error('delivery failed; credit refunded', {
        request_id: requestId,
        channel: input.channel,
        recipient: reserved.recipientMask,
        error: err instanceof Error ? err.message : String(err),
      })
      return { kind: 'delivery_failed' }
    }
    return { kind: 'sent', verificationId: reserved.id, expiresAt: reserved.expiresAt, test: false }
  }
}

/** Puts the code into the template; voice reads it digit by digit ("1, 2, 3, 4"). */
export function renderMessage(template: string, code: string, channel: Channel): string {
  const spoken = channel === 'voice' ? code.split('').join(', ') : code
  return template.replaceAll('{code}', spoken)
}
