/**
 * Send: create a verification and deliver its code (docs/api.md#send-a-code,
 * #order-of-checks, #test-recipients, #credits), as three steps: the test
 * recipient's short-circuit; the reservation, one transaction that decides
 * the limits, the fraud guard and the credit and records the verification
 * `sending` (with its Idempotency-Key, idempotency.ts); then the delivery and
 * its settlement (settlement.ts). A process that stops in between leaves the
 * send `sending`, and recovery (recovery.ts) refunds it. Denials are returned
 * values; only faults throw.
 */
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import { maskRecipient } from '../lib/mask.ts'
import { randomDigits } from '../lib/random.ts'
import type { Hasher } from '../lib/secrets.ts'
import type { VerificationIds } from '../lib/verification-id.ts'
import { YieldLane } from '../lib/yield-lane.ts'
import { emit } from './events.ts'
import { settleDelivered, settleFailed } from './settlement.ts'
import { ipScope, WHATSAPP_SCOPE, type FraudGuard, type FraudVerdict, type Refusal } from './fraud.ts'
import type { Delivery, FraudRule, Repos, SendProfile, Storage } from './ports/index.ts'
import type { Idempotency, IdempotencyOutcome, IdempotentRequest } from './idempotency.ts'
import { destinationOf, maskPrefix } from '../lib/phone-country.ts'
import { type KeyLimited, type KeyLimiter, keyLimitedBy } from './key-limiter.ts'
import { failureCapWait } from './failure-cap.ts'
import { recipientIdentity } from './recipient-identity.ts'
import { TEST_CODE, testModeOf } from './test-recipients.ts'
import type { SecretSealer } from './webhooks.ts'
import { type AutoRoute, autoWorkflowOf, insertSteps } from './workflow.ts'
import { Fallback, type FallbackDeps } from './fallback.ts'
import type { ApiKey, Channel, DeliveryDetail, Limits, OutboundMessage, SendInput, SmsInfo, TestMode, Verification } from './types.ts'
import type { MessageCatalogue, MessageSettings } from './messages/catalogue.ts'
import { type Composed, composeMessage } from './messages/compose.ts'
import { RECIPIENT_LOOKBACK_MS, recipientWindowVerdict, secondsUntil } from './windows.ts'

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
  | KeyLimited
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
  /** `[messages] voice_max_characters`: a 400, decided where `too_long` is. */
  | { kind: 'voice_too_long'; max: number }
  /** The account refuses a send's own `message` and `subject` (`otpd accounts set --custom-text off`): a 400, decided where `too_long` is. */
  | { kind: 'custom_text_refused' }

/** A send's request with what is derived from it once: how its recipient is counted and keyed. */
interface SendRequest {
  key: ApiKey
  input: SendInput
  /** The recipient's identity (docs/api.md#order-of-checks): counted as that, delivered as written. */
  counted: string
  recipientHash: Uint8Array
  expiresInMs: number
  /** The per-key limit, or a hook's own. */
  limiter: KeyLimiter
}

/** What the reservation's transaction decided: a refusal, or the verification to deliver; with the fraud guard's verdict when it ran. */
type Reservation =
  | { refused: SendOutcome | IdempotencyOutcome; verdict: FraudVerdict | null }
  | { refused: null; verification: Verification; code: string; text: Composed; verdict: FraudVerdict }

const sent = (v: Verification): SendOutcome => ({ kind: 'sent', verificationId: v.id, expiresAt: v.expiresAt, test: v.testMode !== null })

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
  /** Seals what a workflow's later steps deliver (otp/workflow.ts). */
  sealer: SecretSealer
  /** Each workflow step started after the first (metrics). */
  onFallback?: FallbackDeps['onFallback']
  /** Each workflow step whose delivery starts (metrics). */
  onStep?: FallbackDeps['onStep']
  /** The `[[routing]]` workflows `channel: "auto"` means (otp/workflow.ts); replaced by a reload. */
  routes: AutoRoute[]
}

/**
 * Sends let go per turn of the event loop while a wave is under way
 * (lib/yield-lane.ts): sends wait on their provider anyway, and a verify read
 * meanwhile answers within its budget.
 */
export const SENDS_PER_TURN = 16
/**
 * Sends give way only while this many wait on their providers: only then can
 * one turn hold a wave of them, and giving way costs a saturated send about
 * 3 % of its CPU (docs/benchmarks.md#slow-providers).
 */
export const GIVE_WAY_FROM = 128
/** How long after a refusal at the ceiling sends still do not give way. */
export const OVERLOAD_WINDOW_MS = 1_000

export class SendService {
  private readonly turns = new YieldLane(SENDS_PER_TURN)
  /** Sends waiting on their providers now, or answered and not yet let go (giveWay). */
  private delivering = 0
  /** When the send route last refused a send at `delivery.max_sends_in_flight` (overloaded). */
  private refusedAt = Number.NEGATIVE_INFINITY
  /** A workflow's later steps (docs/api.md#workflows), with the send's own dependencies. */
  readonly fallback: Fallback

  constructor(private readonly d: SendDeps) {
    this.fallback = new Fallback(d)
  }

  /** The catalogue's language for a request's `locale` (null: none), from the texts in force. */
  readonly resolveLocale = (tag: string): string | null => this.d.messages.resolve(tag)

  /** The workflow `channel: "auto"` means for a phone number, from the tables in force. */
  readonly resolveAuto = (phone: string): { channels: Channel[]; channelTimeout?: number } | null => autoWorkflowOf(this.d.routes, phone)

  /** `via`: a hook's own request limit and providers (docs/integrations.md#limits), in place of the per-key limit and `[channels]`. */
  /**
   * Taken by the send route before a send starts, and here when its provider
   * has answered: undefined (go on) unless a wave of sends is under way.
   */
  giveWay(): Promise<void> | undefined {
    // Once a wave is under way it is let go turn by turn, even as it shrinks below GIVE_WAY_FROM.
    if (!this.turns.active && this.delivering < GIVE_WAY_FROM) return undefined
    // At the ceiling the flood of refusals is the other work: a send that gave way to it would
    // hold its slot for longer and let fewer in (docs/benchmarks.md#slow-providers).
    if (performance.now() - this.refusedAt < OVERLOAD_WINDOW_MS) return undefined
    return this.turns.turn()
  }

  /** The send route refused a send at its ceiling: sends stop giving way for OVERLOAD_WINDOW_MS. */
  overloaded(): void {
    this.refusedAt = performance.now()
  }

  /** A delivery, counted as under way until the send has given way: a wave answered at once stays a wave until it is let go. */
  private async deliverInTurn(delivery: Delivery, message: Parameters<Delivery['deliver']>[0]): ReturnType<Delivery['deliver']> {
    this.delivering++
    try {
      const took = await delivery.deliver(message)
      // Providers answer in waves too: recording and answering them gives way as well.
      const wait = this.giveWay()
      if (wait) await wait
      return took
    } finally {
      this.delivering--
    }
  }

  async send(
    key: ApiKey,
    input: SendInput,
    requestId: string,
    idem?: IdempotentRequest<SendOutcome>,
    via?: { limiter?: KeyLimiter; delivery?: Delivery },
  ): Promise<SendOutcome | IdempotencyOutcome> {
    const { d } = this
    const req = this.request(key, input, via?.limiter ?? d.limiter)
    const testMode = testModeOf(input.channel, input.recipient)
    if (testMode !== null) {
      const answered = await d.storage.write((r) => this.sendToTestRecipient(r, req, testMode, idem))
      if (answered !== 'real') return answered
    }
    // WhatsApp sends count apart (otp/fraud.ts countingDestination), rule 2's too.
    const ipHash =
      input.ip === undefined
        ? null
        : d.hasher
            .digest(HASH_PURPOSE_IP, `${key.accountId}:${input.channel === 'whatsapp' ? WHATSAPP_SCOPE : ''}${ipScope(input.ip)}`)
            .subarray(0, RECIPIENT_HASH_BYTES)
    // Limits, credit and the new verification in one transaction: concurrent
    // sends cannot both see the last free slot or the last credit. A run of
    // it again draws a new code with its new hash: the last run is the one kept.
    const reserved = await d.storage.write((r) => this.reserve(r, req, ipHash, idem))
    if (reserved.verdict) this.reportFraud(reserved.verdict, requestId)
    if (reserved.refused) return reserved.refused
    const v = reserved.verification
    const note = { requestId, channel: input.channel }
    if (input.workflow) d.onStep?.(0, input.channel)
    let provider: string
    let detail: DeliveryDetail | undefined
    try {
      const took = await this.deliverInTurn(via?.delivery ?? d.delivery, deliveryOf(req, reserved))
      provider = took.provider
      // Only a provider that says more (WhatsApp's) costs the settlement two more values.
      if (took.ref !== undefined || took.language !== undefined) detail = { ref: took.ref ?? null, language: took.language ?? null }
    } catch (err) {
      // A workflow moves on to its next step at once (otp/fallback.ts).
      if (input.workflow && input.workflow.length > 1) {
        const inForce = await this.fallback.afterFailure(v, err, { answer: idem?.answer({ kind: 'delivery_failed' }), idempotent: idem !== undefined })
        return inForce ? sent(v) : { kind: 'delivery_failed' }
      }
      const refunded = await settleFailed(d, v, err, note, idem?.answer({ kind: 'delivery_failed' }))
      return refunded ? { kind: 'delivery_failed' } : sent(v)
    }
    // In force once delivered: the answer does not wait for this record (docs/benchmarks.md#what-each-design-choice-buys),
    // but with an Idempotency-Key it does, so that a replay after the answer finds it.
    const settled = settleDelivered(d, v, provider, note, idem !== undefined, detail)
    if (idem) await settled
    if (v.sms && d.onSmsSent) d.onSmsSent(reserved.verdict.country ?? destinationOf(input.recipient).country, v.sms)
    d.logger.debug('delivered', { request_id: requestId, channel: input.channel, provider, recipient: v.recipientMask })
    return sent(v)
  }

  private request(key: ApiKey, input: SendInput, limiter: KeyLimiter): SendRequest {
    const counted = recipientIdentity(input.channel, input.recipient)
    // Keyed by account: one account's counters never touch another's, and the hash alone names the subject.
    const recipientHash = this.d.hasher.digest(HASH_PURPOSE_RECIPIENT, `${key.accountId}:${counted}`).subarray(0, RECIPIENT_HASH_BYTES)
    return { key, input, counted, recipientHash, expiresInMs: (input.expiresIn ?? DEFAULT_EXPIRES_IN) * 1000, limiter }
  }

  /**
   * Test recipients: no delivery, no credit, no per-recipient limit; a custom
   * code is ignored. 'real' when the account has them off: the recipient is then any other.
   */
  private async sendToTestRecipient(
    r: Repos,
    req: SendRequest,
    testMode: TestMode,
    idem?: IdempotentRequest<SendOutcome>,
  ): Promise<SendOutcome | IdempotencyOutcome | 'real'> {
    if (!(await r.fraud.accountSettings(req.key.accountId)).testRecipients) return 'real'
    const limited = await this.keyLimited(r, req)
    if (limited) return limited
    if (customTextRefused(await r.credits.sendProfile(req.key.accountId), req.input)) return { kind: 'custom_text_refused' }
    const now = this.d.clock.now()
    return this.d.idempotency.once(r, idem, now, async () => {
      const v = this.build(req, await r.verifications.nextSeq(), now, TEST_CODE, testMode)
      await r.verifications.insert(v)
      if (req.input.workflow) await insertSteps(r, this.d.sealer, req.input, v, TEST_CODE)
      await emit(r, 'verification.sent', v, v.createdAt, { provider: null })
      return sent(v)
    })
  }

  /**
   * The reservation: the per-key limit, the Idempotency-Key, the text, the
   * fraud guard, the per-recipient limits and the credit, in the order of
   * docs/api.md#order-of-checks; then the verification with its debit.
   */
  private async reserve(r: Repos, req: SendRequest, ipHash: Uint8Array | null, idem?: IdempotentRequest<SendOutcome>): Promise<Reservation> {
    const { d } = this
    const { key, input, recipientHash } = req
    // The account's profile is read with the key's window (one round trip on
    // PostgreSQL); it is used only once the key and the Idempotency-Key let the send through.
    const [limited, profile] = await Promise.all([this.keyLimited(r, req), r.credits.sendProfile(key.accountId)])
    if (limited) return { refused: limited, verdict: null }
    const now = d.clock.now()
    const earlier = idem ? await d.idempotency.check(r, idem, now) : null
    if (earlier) return { refused: earlier, verdict: null }
    if (customTextRefused(profile, input)) return { refused: { kind: 'custom_text_refused' }, verdict: null }
    const code = input.code ?? randomDigits(profile.codeLength ?? d.defaultCodeLength)
    // The text, its language and (SMS) its segments; a 400 when over the
    // operator's limit, decided before any rule counts the send.
    const text = composeMessage(d.messages, { ...input, code, expiresInSeconds: req.expiresInMs / 1000, account: profile })
    const tooLong = tooLongFor(d.messages.settings, input.channel, text) ?? (input.workflow ? this.laterStepTooLong(req, code, profile) : null)
    if (tooLong) return { refused: tooLong, verdict: null }
    // The per-recipient limits' reads under the recipient's lock, and the
    // new row's number, are started here, ahead of the fraud guard's, and
    // travel with them (one round trip on PostgreSQL; docs/benchmarks.md#postgresql-round-trips).
    // They are decided after the guard, in the order of docs/api.md#order-of-checks;
    // a send refused after this leaves its number unused on PostgreSQL (SQLite gives it again).
    const recipientReads = Promise.all([
      failureCapWait(r, recipientHash, d.limits, now),
      r.verifications.recipientSendTimes(recipientHash, now - RECIPIENT_LOOKBACK_MS),
      r.verifications.nextSeq(),
    ])
    // Awaited below, or not at all when the guard refuses or fails first: its failure is then the transaction's.
    recipientReads.catch(() => undefined)
    const facts = {
      accountId: key.accountId,
      channel: input.channel,
      recipient: req.counted,
      ipHash,
      now,
      account: profile.fraud,
      checkedElsewhere: input.checkedBy !== undefined,
    }
    const verdict = await d.guard.check(r, facts)
    if (verdict.refusal) {
      const blocked = await this.recordBlock(r, req, verdict.refusal, now)
      // Its 429s are stored for an Idempotency-Key; the geo rule's 403 is not
      // (docs/api.md#idempotency-keys names 403 among the answers not stored).
      return { refused: blocked.rule === 'geo' ? blocked : await this.decided(r, idem, blocked, now), verdict }
    }
    const [capWait, times, seq] = await recipientReads
    const recipientLimited = recipientRefusal(capWait, times, d.limits, now)
    if (recipientLimited) return { refused: await this.decided(r, idem, recipientLimited, now), verdict }
    const v = this.build(req, seq, now, code, null, verdict, text.sms === null ? undefined : { encoding: text.sms.encoding, segments: text.sms.segments })
    if (!(await r.credits.debit({ accountId: key.accountId, amount: 1, verificationId: v.id, at: now }))) {
      return { refused: await this.decided(r, idem, { kind: 'no_credits' }, now), verdict }
    }
    await r.verifications.insert(v)
    if (input.workflow) await insertSteps(r, d.sealer, input, v, code)
    if (idem) await d.idempotency.reserve(r, idem, sent(v), now, v.seq)
    await d.guard.recordSend(r, verdict, v.seq, facts)
    return { refused: null, verification: v, code, text, verdict }
  }

  /** A workflow's later SMS or call over the operator's limit: refused with the send, before anything is charged. */
  private laterStepTooLong(req: SendRequest, code: string, profile: SendProfile): SendOutcome | null {
    const { input } = req
    for (const step of input.workflow!.slice(1)) {
      if (step.channel !== 'sms' && step.channel !== 'voice') continue
      const text = composeMessage(this.d.messages, { ...input, ...step, code, expiresInSeconds: req.expiresInMs / 1000, account: profile })
      const tooLong = tooLongFor(this.d.messages.settings, step.channel, text)
      if (tooLong) return tooLong
    }
    return null
  }

  /** The per-key limit, decided and counted inside the operation's transaction. */
  private async keyLimited(r: Repos, req: SendRequest): Promise<SendOutcome | null> {
    return keyLimitedBy(await req.limiter.admit(r, req.key.id))
  }

  /** An answer decided in the reservation is stored there for its Idempotency-Key. */
  private async decided(r: Repos, idem: IdempotentRequest<SendOutcome> | undefined, o: SendOutcome, now: number): Promise<SendOutcome> {
    if (idem) await this.d.idempotency.record(r, idem, o, now)
    return o
  }

  /** A fraud guard's refusal writes only its `send.blocked` event. */
  private async recordBlock(r: Repos, req: SendRequest, refusal: Refusal, now: number): Promise<SendOutcome & { kind: 'fraud_blocked' }> {
    const { rule, country, prefix, max, retryAfter } = refusal
    const { key, input } = req
    await r.events.add({
      type: 'send.blocked',
      accountId: key.accountId,
      at: now,
      verification: null,
      status: null,
      // The prefix masked as the recipient is: together they show no more digits than the mask.
      extra: { rule, country, prefix: prefix === null ? null : maskPrefix(prefix), channel: input.channel, recipient: maskRecipient(input.recipient) },
      recipientHash: req.recipientHash,
    })
    return { kind: 'fraud_blocked', rule, country, max, retryAfter }
  }

  /**
   * The new verification, built inside the transaction that inserts it: its id carries the row's number.
   * `fraud`: the guard's verdict (real sends), whose country and monitor-mode rule the row keeps for the console.
   */
  private build(
    req: SendRequest,
    seq: number,
    now: number,
    code: string,
    testMode: TestMode | null,
    fraud: FraudVerdict | null = null,
    sms?: SmsInfo,
  ): Verification {
    const { key, input } = req
    const id = this.d.ids.make(seq)
    const v: Verification = {
      seq,
      id,
      keyId: key.id,
      accountId: key.accountId,
      channel: input.channel,
      recipientHash: req.recipientHash,
      recipientMask: maskRecipient(input.recipient),
      codeHash: this.d.hasher.digest(HASH_PURPOSE_CODE, `${id}:${code}`),
      testMode,
      status: 'active',
      charged: testMode === null,
      createdAt: now,
      expiresAt: testMode === 'expired' ? now : now + req.expiresInMs,
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
    if (input.checkedBy !== undefined) v.checkedBy = input.checkedBy
    return v
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

/** The recipient's failure cap first (while it holds, a code sent now could not be verified), then its send windows. */
function recipientRefusal(capWait: number, times: readonly number[], limits: Limits, now: number): SendOutcome | null {
  if (capWait > 0) return { kind: 'recipient_capped', retryAfter: secondsUntil(capWait) }
  const full = recipientWindowVerdict(times, limits, now)
  return full && { kind: 'recipient_limited', max: full.max, period: full.period, retryAfter: full.retryAfter }
}

/** What the provider is given for a reserved send. */
function deliveryOf(req: SendRequest, reserved: { verification: Verification; code: string; text: Composed }): OutboundMessage {
  const { verification: v, text } = reserved
  return {
    channel: req.input.channel,
    recipient: req.input.recipient,
    text: text.text,
    subject: text.subject,
    locale: text.locale,
    // A hook's whole text holds its server's code, which otpd does not know apart from it.
    code: req.input.wholeText ? '' : reserved.code,
    verificationId: v.id,
    expiresAt: v.expiresAt,
    ...(req.input.link === undefined ? {} : { link: req.input.link }),
  }
}

/** Whether the account refuses the send's own text (docs/api.md#send-request-body). */
function customTextRefused(profile: SendProfile, input: SendInput): boolean {
  return !profile.customText && (input.message !== undefined || input.subject !== undefined)
}

/** What one send may cost: an SMS's segments, a call's characters (docs/messages.md#encoding-and-segments). */
function tooLongFor(settings: MessageSettings, channel: SendInput['channel'], text: Composed): SendOutcome | null {
  const maxSegments = settings.smsMaxSegments
  if (text.sms !== null && maxSegments !== null && text.sms.segments > maxSegments) return { kind: 'too_long', max: maxSegments }
  const maxCharacters = settings.voiceMaxCharacters
  if (channel === 'voice' && maxCharacters !== null && [...text.text].length > maxCharacters) return { kind: 'voice_too_long', max: maxCharacters }
  return null
}
