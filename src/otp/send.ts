/**
 * Send: create a verification and deliver its code (docs/api.md#send-a-code,
 * #order-of-checks, #test-recipients, #credits). Denials are returned values;
 * only faults throw.
 *
 * The fraud guard (fraud.ts, docs/api.md#fraud-guard) decides in the first
 * transaction, after the test-recipient short-circuit and before the
 * per-recipient limits; a refusal there writes only its block and its
 * `send.blocked` event. The per-recipient limits follow in the same
 * transaction (docs/api.md#order-of-checks): the failure cap, then the send
 * windows; a refusal of either writes nothing but an Idempotency-Key's answer.
 *
 * Two transactions around the delivery: the first decides the limits and
 * records the verification with its debit and delivery `sending`; the second
 * records the outcome (accepted, or failed and refunded). An accepted outcome
 * touches only its verification's rows, so it goes by `writeShared`: the
 * engine may commit it with other sends' outcomes. A process that stops in
 * between leaves the send `sending`, and recovery (recovery.ts) refunds it.
 *
 * With an Idempotency-Key (idempotency.ts) the first transaction also checks
 * the key and records it: `done` with an answer decided there, or `running`
 * until the second transaction (or recovery) settles the delivery.
 */
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import { maskRecipient } from '../lib/mask.ts'
import { randomDigits } from '../lib/random.ts'
import type { Hasher } from '../lib/secrets.ts'
import type { VerificationIds } from '../lib/verification-id.ts'
import { emit } from './events.ts'
import { ipScope, type FraudGuard, type FraudVerdict, type Refusal } from './fraud.ts'
import type { Delivery, FraudRule, Repos, Storage, StoredAnswer } from './ports/index.ts'
import type { Idempotency, IdempotencyOutcome, IdempotentRequest } from './idempotency.ts'
import { destinationOf, maskPrefix } from '../lib/phone-country.ts'
import type { KeyLimiter } from './key-limiter.ts'
import { failureCapWait } from './failure-cap.ts'
import { recipientIdentity } from './recipient-identity.ts'
import { TEST_CODE, testModeOf } from './test-recipients.ts'
import type { ApiKey, Limits, SendInput, SmsInfo, Verification } from './types.ts'
import type { MessageCatalogue } from './messages/catalogue.ts'
import { type Composed, composeMessage } from './messages/compose.ts'
import { secondsUntil, waitForRoom } from './windows.ts'

export const HASH_PURPOSE_CODE = 'code'
export const HASH_PURPOSE_RECIPIENT = 'recipient'
export const DEFAULT_EXPIRES_IN = 300
/** The spec's texts: the built-in English ones (messages/built-in.ts), which a send without `locale` gets out of the box. */
export const DEFAULT_MESSAGE = 'Your verification code is: {code}'
export const DEFAULT_SUBJECT = 'Your Verification Code'
/** 128 bits: no two recipients share a counter, at half the index of a whole HMAC. */
export const RECIPIENT_HASH_BYTES = 16
export const HASH_PURPOSE_IP = 'end-user-ip'

export type SendOutcome =
  | { kind: 'key_limited'; max: number; retryAfter: number }
  /** `test`: a test recipient (nothing delivered, nothing charged). */
  | { kind: 'sent'; verificationId: string; expiresAt: number; test: boolean }
  | { kind: 'recipient_limited'; max: number; period: string; retryAfter: number }
  /** The recipient's failure cap holds (docs/api.md#hardening): a code sent now could not be verified. */
  | { kind: 'recipient_capped'; retryAfter: number }
  | { kind: 'no_credits' }
  | { kind: 'delivery_failed' }
  /** The fraud guard refused it (docs/api.md#fraud-guard): nothing delivered, charged or counted. */
  | { kind: 'fraud_blocked'; rule: FraudRule; country: string | null; max: number | null; retryAfter: number | null }
  /** `[messages] sms_max_segments` (docs/messages.md#encoding-and-segments): a 400, decided before anything is written or counted but the per-key request. */
  | { kind: 'too_long'; max: number }

const WINDOWS = [
  { ms: 60_000, period: 'minute', limit: (l: Limits) => l.recipientPerMinute },
  { ms: 3_600_000, period: 'hour', limit: (l: Limits) => l.recipientPerHour },
  { ms: 86_400_000, period: '24 hours', limit: (l: Limits) => l.recipientPerDay },
] as const
const LONGEST_WINDOW_MS = 86_400_000

export interface SendDeps {
  storage: Storage
  delivery: Delivery
  hasher: Hasher
  ids: VerificationIds
  clock: Clock
  logger: Logger
  limits: Limits
  limiter: KeyLimiter
  defaultCodeLength: number
  idempotency: Idempotency
  guard: FraudGuard
  /** Each refusal, and each would-be refusal in monitor mode (metrics); called once per send, after its commit. */
  onFraudDecision?: (refusal: Refusal, enforced: boolean) => void
  /** The texts in force (docs/messages.md); replaced by a reload. */
  messages: MessageCatalogue
  /** Each SMS a provider took, with its destination country (metrics); called once per send. */
  onSmsSent?: (country: string, sms: SmsInfo) => void
}

export class SendService {
  constructor(private readonly d: SendDeps) {}

  /** The catalogue's language for a request's `locale` (null: none), from the texts in force. */
  readonly resolveLocale = (tag: string): string | null => this.d.messages.resolve(tag)

  async send(key: ApiKey, input: SendInput, requestId: string, idem?: IdempotentRequest<SendOutcome>): Promise<SendOutcome | IdempotencyOutcome> {
    const { d } = this
    // Counted as its identity (docs/api.md#order-of-checks), delivered as written.
    const counted = recipientIdentity(input.channel, input.recipient)
    // Keyed by account: one account's counters never touch another's, and the hash alone names the subject.
    const recipientHash = d.hasher.digest(HASH_PURPOSE_RECIPIENT, `${key.accountId}:${counted}`).subarray(0, RECIPIENT_HASH_BYTES)
    let testMode = testModeOf(input.channel, input.recipient)
    const expiresIn = (input.expiresIn ?? DEFAULT_EXPIRES_IN) * 1000

    // Inside the transaction that inserts it: the id carries the row's number.
    // `fraud`: the guard's verdict (real sends), whose country and monitor-mode rule the row keeps for the console.
    // `seq`: the row's number when the caller drew it already.
    const build = async (r: Repos, now: number, code: string, fraud: FraudVerdict | null = null, sms?: SmsInfo, seq?: number): Promise<Verification> => {
      seq ??= await r.verifications.nextSeq()
      const id = d.ids.make(seq)
      const v: Verification = {
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
        delivery: testMode === null ? 'sending' : null,
        deliveryProvider: null,
        deliveryUpdatedAt: testMode === null ? now : null,
        country: fraud?.country ?? null,
        fraudMonitored: fraud?.monitored?.rule ?? null,
      }
      if (sms) v.sms = sms
      return v
    }

    // The per-key limit is decided and counted inside the operation's transaction.
    const keyLimited = async (r: Repos): Promise<SendOutcome | null> => {
      const a = await d.limiter.admit(r, key.id)
      return a.ok ? null : { kind: 'key_limited', max: a.max, retryAfter: a.retryAfter }
    }

    const sent = (v: Verification): SendOutcome => ({ kind: 'sent', verificationId: v.id, expiresAt: v.expiresAt, test: v.testMode !== null })

    if (testMode !== null) {
      // Test recipients: no delivery, no credit, no per-recipient limit; a custom code is ignored.
      const answered = await d.storage.write(async (r): Promise<SendOutcome | IdempotencyOutcome | 'real'> => {
        // An account with test recipients off treats them as any other recipient.
        if (!(await r.fraud.accountSettings(key.accountId)).testRecipients) return 'real'
        const limited = await keyLimited(r)
        if (limited) return limited
        const now = d.clock.now()
        return d.idempotency.once(r, idem, now, async () => {
          const v = await build(r, now, TEST_CODE)
          await r.verifications.insert(v)
          await emit(r, 'verification.sent', v, v.createdAt, { provider: null })
          return sent(v)
        })
      })
      if (answered !== 'real') return answered
      testMode = null
    }
    const ipHash = input.ip === undefined ? null : d.hasher.digest(HASH_PURPOSE_IP, `${key.accountId}:${ipScope(input.ip)}`).subarray(0, RECIPIENT_HASH_BYTES)

    // Limits, credit and the new verification in one transaction: concurrent
    // sends cannot both see the last free slot or the last credit. A run of
    // it again draws a new code with its new hash: the last run is the one kept.
    let code = ''
    let composed: Composed | null = null
    let verdict: FraudVerdict | null = null
    const reserved = await d.storage.write(async (r): Promise<SendOutcome | IdempotencyOutcome | Verification> => {
      verdict = null
      // The account's profile is read with the key's window (one round trip on
      // PostgreSQL); it is used only once the key and the Idempotency-Key let the send through.
      const [limited, profile] = await Promise.all([keyLimited(r), r.credits.sendProfile(key.accountId)])
      if (limited) return limited
      const now = d.clock.now()
      const earlier = idem ? await d.idempotency.check(r, idem, now) : null
      if (earlier) return earlier
      // An answer decided here is stored here.
      const decided = async (o: SendOutcome): Promise<SendOutcome> => {
        if (idem) await d.idempotency.record(r, idem, o, now)
        return o
      }
      code = input.code ?? randomDigits(profile.codeLength ?? d.defaultCodeLength)
      // The text, its language and (SMS) its segments; a 400 when over the
      // operator's limit, decided before any rule counts the send.
      const text = composeMessage(d.messages, {
        ...input,
        code,
        expiresInSeconds: expiresIn / 1000,
        account: profile,
      })
      composed = text
      const maxSegments = d.messages.settings.smsMaxSegments
      if (text.sms !== null && maxSegments !== null && text.sms.segments > maxSegments) return { kind: 'too_long', max: maxSegments }
      // The per-recipient limits' reads under the recipient's lock, and the
      // new row's number, are started here, ahead of the fraud guard's, and
      // travel with them (one round trip on PostgreSQL; docs/benchmarks.md#postgresql-round-trips).
      // They are decided after the guard, in the order of docs/api.md#order-of-checks;
      // a send refused after this leaves its number unused on PostgreSQL (SQLite gives it again).
      const recipientReads = Promise.all([
        failureCapWait(r, recipientHash, d.limits, now),
        r.verifications.recipientSendTimes(recipientHash, now - LONGEST_WINDOW_MS),
        r.verifications.nextSeq(),
      ])
      // Awaited below, or not at all when the guard refuses or fails first: its failure is then the transaction's.
      recipientReads.catch(() => undefined)
      // The fraud guard, before the per-recipient limits (docs/api.md#fraud-guard).
      const facts = { accountId: key.accountId, channel: input.channel, recipient: counted, ipHash, now, account: profile.fraud }
      const fraud = await d.guard.check(r, facts)
      verdict = fraud
      if (fraud.refusal) {
        const { rule, country, prefix, max, retryAfter } = fraud.refusal
        await r.events.add({
          type: 'send.blocked',
          accountId: key.accountId,
          at: now,
          verification: null,
          status: null,
          // The prefix masked as the recipient is: together they show no more digits than the mask.
          extra: { rule, country, prefix: prefix === null ? null : maskPrefix(prefix), channel: input.channel, recipient: maskRecipient(input.recipient) },
        })
        const blocked: SendOutcome = { kind: 'fraud_blocked', rule, country, max, retryAfter }
        // Its 429s are stored for an Idempotency-Key; the geo rule's 403 is not
        // (docs/api.md#idempotency-keys names 403 among the answers not stored).
        return rule === 'geo' ? blocked : decided(blocked)
      }
      // The per-recipient limits. First the failure cap: while it holds, a new
      // code could not be verified, so none is sold, whatever the send windows
      // say; its answer is stored for an Idempotency-Key like theirs.
      const [capWait, times, seq] = await recipientReads
      if (capWait > 0) return decided({ kind: 'recipient_capped', retryAfter: secondsUntil(capWait) })
      let worst: { max: number; period: string; wait: number } | null = null
      for (const w of WINDOWS) {
        const max = w.limit(d.limits)
        const inWindow = times.filter((t) => t > now - w.ms)
        const wait = waitForRoom(inWindow, w.ms, max, now)
        if (wait > 0 && (worst === null || wait > worst.wait)) worst = { max, period: w.period, wait }
      }
      if (worst) return decided({ kind: 'recipient_limited', max: worst.max, period: worst.period, retryAfter: secondsUntil(worst.wait) })
      const v = await build(r, now, code, fraud, text.sms === null ? undefined : { encoding: text.sms.encoding, segments: text.sms.segments }, seq)
      if (!(await r.credits.debit({ accountId: key.accountId, amount: 1, verificationId: v.id, at: now }))) return decided({ kind: 'no_credits' })
      await r.verifications.insert(v)
      if (idem) await d.idempotency.reserve(r, idem, sent(v), now, v.seq)
      await d.guard.recordSend(r, fraud, v.seq, facts)
      return v
    })
    if (verdict) this.reportFraud(verdict, requestId)
    if ('kind' in reserved) return reserved
    const message = composed!

    let provider: string
    try {
      provider = (
        await d.delivery.deliver({
          channel: input.channel,
          recipient: input.recipient,
          text: message.text,
          subject: message.subject,
          locale: message.locale,
          code,
          verificationId: reserved.id,
          expiresAt: reserved.expiresAt,
        })
      ).provider
    } catch (err) {
      // Refunded and out of use. If this transaction fails, the send stays
      // `sending` and recovery refunds it once the delivery timeout is past.
      const refunded = await refundUnsettled(d.storage, reserved, 'failed', d.clock.now(), idem?.answer({ kind: 'delivery_failed' }), reserved)
      // Settled first by someone else, and so in force: by recovery (as
      // `unknown`, the code verifiable) or by the provider's own receipt (a
      // provider took it, though its answer never came). The answer is the
      // send's 200, with or without an Idempotency-Key: a 500 would make the
      // client send again for a code that works and was charged.
      if (!refunded) return sent(reserved)
      d.logger.error('delivery failed; credit refunded', {
        request_id: requestId,
        channel: input.channel,
        recipient: reserved.recipientMask,
        error: err instanceof Error ? err.message : String(err),
      })
      return { kind: 'delivery_failed' }
    }
    // The verification and its debit are stored and the code delivered: the
    // send is in force, and the answer does not wait for this record to be
    // durable (waiting for a second flush cost a sixth of send's throughput,
    // docs/benchmarks.md). If it is lost (a crash before its commit, a failed
    // commit), the send stays `sending` and recovery refunds it as `unknown`:
    // the one way a fault can cost the operator a credit, never the client.
    // A clean stop writes it first (Server.shutdown waits for queued writes).
    // With an Idempotency-Key the answer waits for it: a replay that follows
    // the answer then finds the stored answer, not "in progress". If it is
    // lost, recovery makes the record `done` with the same 200.
    const settled = d.storage
      .writeShared(async (r) => {
        const now = d.clock.now()
        // The row as it is now (a verify may already have used it), from the settlement itself.
        const v = await r.verifications.settleDelivery(reserved.seq, 'accepted', provider, now)
        if (v) {
          // An SMS's encoding and segments ride on its event (docs/api.md#events).
          await emit(r, 'verification.sent', v, now, v.sms ? { provider, encoding: v.sms.encoding, segments: v.sms.segments } : { provider })
        }
        if (idem) await r.idempotency.settle(reserved.seq, null)
      })
      .catch((err: unknown) =>
        d.logger.error('delivered, but the outcome could not be recorded: recovery will record it as unknown and refund the credit', {
          request_id: requestId,
          channel: input.channel,
          recipient: reserved.recipientMask,
          error: err instanceof Error ? err.message : String(err),
        }),
      )
    if (idem) await settled
    if (reserved.sms && d.onSmsSent) d.onSmsSent((verdict as FraudVerdict | null)?.country ?? destinationOf(input.recipient).country, reserved.sms)
    d.logger.debug('delivered', { request_id: requestId, channel: input.channel, provider, recipient: reserved.recipientMask })
    return sent(reserved)
  }

  /** One log line per refusal (or would-be refusal in monitor mode), with the prefix masked; never the number. */
  private reportFraud(verdict: FraudVerdict, requestId: string): void {
    const report = (x: Refusal, enforced: boolean) => {
      const fields = { request_id: requestId, rule: x.rule, country: x.country ?? '-', prefix: x.prefix === null ? '-' : maskPrefix(x.prefix) }
      // info, not warn: warnings are held back when they repeat (lib/logger.ts), and every refusal gets its line.
      this.d.logger.info(enforced ? 'send refused by the fraud guard' : 'send would be refused by the fraud guard (monitor mode)', fields)
      this.d.onFraudDecision?.(x, enforced)
    }
    if (verdict.monitored) report(verdict.monitored, false)
    if (verdict.refusal) report(verdict.refusal, true)
  }
}

/**
 * Settles a send that no provider took (`failed`) or whose outcome is unknown
 * (`unknown`), and refunds its credit, in one transaction (with its
 * `verification.delivery_failed` event when it failed). `unknown` writes no
 * event: no event type (docs/api.md#events) says "may have arrived", and the code's later
 * events (approved, expired) still come. Only a send still
 * `sending` is refunded: one already settled (by another process's recovery)
 * is left as it is. True when this call refunded it.
 *
 * Its Idempotency-Key record, if any, is settled in the same transaction:
 * with `answer` (a failed send's 500), or with the answer it holds (the 200 of
 * a send in force, for `unknown`).
 */
export function refundUnsettled(
  storage: Storage,
  v: { seq: number; id: string; accountId: number },
  state: 'failed' | 'unknown',
  now: number,
  answer?: StoredAnswer,
  /** The verification, for a `failed` one's `verification.delivery_failed` event. */
  report?: Verification,
): Promise<boolean> {
  return storage.write(async (r) => {
    if (!(await r.verifications.settleDelivery(v.seq, state, null, now))) {
      // Already settled (by recovery, or by a receipt): in force, so its record holds the 200 it answers.
      await r.idempotency.settle(v.seq, null)
      return false
    }
    // Never delivered: not a send for the fraud guard (a provider outage must not look like pumping).
    // An `unknown` one may have arrived, and stays.
    if (state === 'failed') await r.fraud.dropSend(v.seq)
    await r.credits.post({ accountId: v.accountId, kind: 'refund', amount: 1, verificationId: v.id, at: now })
    if (report && state === 'failed') {
      // The row as it is now: `failed`, or `canceled` if a cancel came during the delivery (the status order).
      const after: Verification = (await r.verifications.findById(v.id, v.seq)) ?? { ...report, status: 'failed', delivery: 'failed', deliveryUpdatedAt: now }
      await emit(r, 'verification.delivery_failed', after, now)
    }
    await r.idempotency.settle(v.seq, answer ?? null)
    return true
  })
}
