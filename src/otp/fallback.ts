/**
 * A workflow's next step (docs/api.md#workflows): started at once when the
 * current step's delivery has failed for good (no provider took it, or a
 * receipt says undelivered), when `channel_timeout` passes without a correct
 * code (the backstop, from the steps' `due_at`), or on the client's `/next`.
 *
 * One transaction ends the current step, settles a synchronous failure
 * (delivery `failed`, its credit refunded), and starts the next step that may
 * start (a claim only one node wins): the fraud guard decides it, its credit
 * is debited, the verification takes its channel, the step after it becomes
 * due, and `verification.fallback` is written. The delivery follows, as a
 * send's does, and its outcome is settled as a send's (settlement.ts). A step
 * refused by the guard or short of credit is skipped with its reason and the
 * next one tried. An approved, canceled, expired, locked or failed
 * verification never advances; steps never extend `expires_at`.
 */
import { emit } from './events.ts'
import { composeMessage } from './messages/compose.ts'
import type { Delivery, DeliveryFailure, Repos, StepEnd, StepRow, Storage, StoredAnswer } from './ports/index.ts'
import { recipientIdentity } from './recipient-identity.ts'
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import type { FraudGuard } from './fraud.ts'
import type { MessageCatalogue } from './messages/catalogue.ts'
import type { SecretSealer } from './webhooks.ts'
import { settleDelivered } from './settlement.ts'
import { statusOf } from './status.ts'
import type { Channel, DeliveryDetail, Limits, OutboundMessage, Verification } from './types.ts'
import type { SealedStep } from './workflow.ts'

/** What one advance decided. */
export type Advance =
  /** A step started: deliver `message` (null for a test recipient's, which delivers nothing). */
  | { kind: 'started'; v: Verification; step: number; message: OutboundMessage | null; from: Channel; reason: StepEnd }
  /** The current step ended and no later step could start. */
  | { kind: 'exhausted' }
  /** Nothing changed: the step had ended or moved on already (another node, a receipt), or there is no workflow. */
  | { kind: 'stale' }
  /** The verification no longer advances (its status). */
  | { kind: 'over'; status: string }

/** The deliveries that ended the steps a send's Idempotency-Key waits on, with its 500. */
interface Settling {
  answer?: StoredAnswer
  idempotent: boolean
}

/** What an advance needs: the send's own dependencies (otp/send.ts SendDeps), as a reload leaves them. */
export interface FallbackDeps {
  storage: Storage
  delivery: Delivery
  clock: Clock
  logger: Logger
  limits: Limits
  guard: FraudGuard
  messages: MessageCatalogue
  sealer: SecretSealer
  /** Each step started after the first (metrics). */
  onFallback?: (from: string, to: string, reason: StepEnd) => void
  /** Each step whose delivery starts, the first (the send's) included; test recipients' are not (metrics). */
  onStep?: (step: number, channel: Channel) => void
}

const DELIVERED = new Set(['accepted', 'delivered', 'unknown'])
const DUE_PAGE = 100
/** How much later a due step is looked at again while the current step's delivery is still under way. */
const SENDING_RETRY_MS = 5_000

export class Fallback {
  /** `d`: the send's own dependencies object, which a reload updates in place (the providers, the texts). */
  constructor(private readonly d: FallbackDeps) {}

  /** The backstop: every step whose `channel_timeout` has passed, each advanced in its own transaction. */
  async advanceDue(): Promise<number> {
    const { d } = this
    let started = 0
    for (;;) {
      const page = await d.storage.read((r) => r.workflows.due(d.clock.now(), DUE_PAGE))
      let moved = 0
      for (const due of page) {
        const advance = await d.storage.write((r) => this.advanceIn(r, due, null, due.step - 1, 'timeout'))
        if (advance.kind !== 'stale') moved++
        if (advance.kind === 'started') {
          started++
          await this.deliver(advance, { idempotent: false })
        }
      }
      // A page that moved nothing would be read again as it is: the next tick looks.
      if (page.length < DUE_PAGE || moved === 0) return started
    }
  }

  /** A receipt said the current step's message will never arrive. */
  async afterUndelivered(target: { seq: number; id: string }): Promise<void> {
    try {
      const moved = await this.d.storage.write((r) => this.advanceIn(r, target, null, null, 'undelivered'))
      if (moved.kind === 'started') await this.deliver(moved, { idempotent: false })
    } catch (err) {
      this.d.logger.error("a workflow's next step after an undelivered receipt failed to start; its channel_timeout starts it", {
        error: err instanceof Error ? err.message : String(err),
      })
    }
  }

  /** `/next`, inside its transaction (the key's limit and Idempotency-Key decided there): the step it starts, if any. */
  requested(r: Repos, v: Verification): Promise<Advance> {
    return this.advanceIn(r, v, v, null, 'requested')
  }

  /**
   * No provider took the current step's message: settled `failed` and
   * refunded, and the next step started, in one transaction; then delivered,
   * and so on. True when the verification is in force (a step is delivering
   * or delivered); false when it failed as a plain send does (refunded, out of use).
   */
  async afterFailure(v: Verification, err: unknown, settling: Settling): Promise<boolean> {
    const { d } = this
    const late = (err as Partial<DeliveryFailure> | null)?.mayStillDeliver
    const moved = await d.storage.write((r) => this.failIn(r, v, typeof late === 'string' ? late : null, settling.answer))
    d.logger.error('delivery failed; credit refunded', {
      channel: v.channel,
      recipient: v.recipientMask,
      error: err instanceof Error ? err.message : String(err),
    })
    if (moved.kind === 'started') return this.deliver(moved, settling)
    return moved.kind === 'stale' || moved.kind === 'over'
  }

  /** Delivers a started step; its failure moves on at once. True when a provider took one. */
  async deliver(moved: Extract<Advance, { kind: 'started' }>, settling: Settling): Promise<boolean> {
    const { d } = this
    // Counted once its transaction is in (a transaction may run more than once).
    d.onFallback?.(moved.from, moved.v.channel, moved.reason)
    if (moved.message === null) return true
    d.onStep?.(moved.step, moved.message.channel)
    const v = moved.v
    try {
      const took = await d.delivery.deliver(moved.message)
      const detail: DeliveryDetail | undefined =
        took.ref !== undefined || took.language !== undefined ? { ref: took.ref ?? null, language: took.language ?? null } : undefined
      await settleDelivered(d, v, took.provider, { requestId: '-', channel: v.channel }, settling.idempotent, detail)
      return true
    } catch (err) {
      return this.afterFailure(v, err, settling)
    }
  }

  /** The current step's failed delivery, settled; then the next step. */
  private async failIn(r: Repos, sent: Verification, provider: string | null, answer?: StoredAnswer): Promise<Advance> {
    const now = this.d.clock.now()
    if (!(await r.workflows.failCurrent(sent.seq, provider, now))) {
      // Settled first (recovery, a receipt): its Idempotency-Key holds the 200 it answers.
      await r.idempotency.settle(sent.seq, null)
      return { kind: 'stale' }
    }
    await r.credits.post({ accountId: sent.accountId, kind: 'refund', amount: 1, verificationId: sent.id, at: now })
    const v = (await r.verifications.findById(sent.id, sent.seq))!
    const moved = await this.advanceIn(r, v, v, null, 'delivery_failed')
    if (moved.kind === 'started') return moved
    const steps = await r.workflows.steps(v.seq)
    if (steps.some((s) => s.endedAt !== null && s.delivery !== null && DELIVERED.has(s.delivery))) return moved
    // No step reached anyone: out of use, as a plain send no provider took.
    await r.workflows.failVerification(v.seq)
    await r.fraud.dropSend(v.seq)
    await emit(r, 'verification.delivery_failed', { ...v, status: v.status === 'active' ? 'failed' : v.status }, now)
    await r.idempotency.settle(v.seq, answer ?? null)
    return { kind: 'exhausted' }
  }

  /**
   * Ends step `from` (null: the current one) for `reason` and starts the next
   * that may start. `known`: the verification as this transaction already read it.
   */
  private async advanceIn(r: Repos, target: { seq: number; id: string }, known: Verification | null, from: number | null, reason: StepEnd): Promise<Advance> {
    const { d } = this
    const { seq } = target
    const steps = await r.workflows.steps(seq)
    const current = steps.findLastIndex((s) => s.startedAt !== null)
    if (current < 0 || (from !== null && from !== current) || steps[current]!.endedAt !== null) return { kind: 'stale' }
    const v = known ?? (await r.verifications.findById(target.id, seq))
    if (!v) return { kind: 'stale' }
    const now = d.clock.now()
    const status = await statusOf(r, v, d.limits, now)
    if (status !== 'pending') {
      await r.workflows.close(seq)
      return { kind: 'over', status }
    }
    // The receipt's advance only for the step it was about.
    if (reason === 'undelivered' && v.delivery !== 'undelivered') return { kind: 'stale' }
    // A delivery under way is settled by its own request (a step's outcome is the verification row's): the backstop looks again shortly.
    if (v.delivery === 'sending' && reason !== 'delivery_failed') {
      if (reason === 'timeout') await r.workflows.setDue(seq, current + 1, now + SENDING_RETRY_MS)
      return { kind: 'stale' }
    }
    // The client's asking ends nothing when no step is left to start.
    if (reason === 'requested' && !steps.some((s, i) => i > current && s.startedAt === null && s.endedAt === null)) return { kind: 'stale' }
    const ended = { at: now, reason, provider: v.deliveryProvider, delivery: v.delivery }
    if (!(await r.workflows.end(seq, current, ended))) return { kind: 'stale' }
    let why: StepEnd = reason
    for (let k = current + 1; k < steps.length && now < v.expiresAt; k++) {
      const started = await this.startStep(r, v, steps, current, k, why, now)
      if (started.kind === 'started') return started
      why = started.reason
    }
    await r.workflows.close(seq)
    return { kind: 'exhausted' }
  }

  /** Step `k`, claimed: started (guard, credit, the verification's new channel), or skipped with its reason. */
  private async startStep(
    r: Repos,
    v: Verification,
    steps: StepRow[],
    from: number,
    k: number,
    why: StepEnd,
    now: number,
  ): Promise<Extract<Advance, { kind: 'started' }> | { kind: 'skipped'; reason: StepEnd }> {
    const { d } = this
    const step = steps[k]!
    const claimed = await r.workflows.claim(v.seq, k, now)
    if (!claimed) return { kind: 'skipped', reason: why }
    const test = v.testMode !== null
    const payload = test || claimed.sealed === null ? null : (JSON.parse(d.sealer.open(claimed.sealed)) as SealedStep)
    let message: OutboundMessage | null = null
    let sms: { encoding: string; segments: number } | null = null
    if (payload) {
      const profile = await r.credits.sendProfile(v.accountId)
      const facts = {
        accountId: v.accountId,
        channel: step.channel,
        recipient: recipientIdentity(step.channel, payload.recipient),
        ipHash: null,
        now,
        account: profile.fraud,
        checkedElsewhere: v.checkedBy !== undefined,
      }
      const verdict = await d.guard.check(r, facts)
      const refused: StepEnd | null = verdict.refusal
        ? 'fraud_blocked'
        : (await r.credits.debit({ accountId: v.accountId, amount: 1, verificationId: v.id, at: now }))
          ? null
          : 'no_credits'
      if (refused) {
        await r.workflows.skip(v.seq, k, now, refused)
        return { kind: 'skipped', reason: refused }
      }
      const expiresInSeconds = Math.round((v.expiresAt - v.createdAt) / 1000)
      const text = composeMessage(d.messages, { ...payload, channel: step.channel, expiresInSeconds, account: profile })
      if (text.sms) sms = { encoding: text.sms.encoding, segments: text.sms.segments }
      message = {
        channel: step.channel,
        recipient: payload.recipient,
        text: text.text,
        subject: text.subject,
        locale: text.locale,
        code: payload.code,
        verificationId: v.id,
        expiresAt: v.expiresAt,
      }
    }
    await r.workflows.switchTo(v.seq, step.channel, now, sms)
    const next = steps[k + 1]
    const due = now + step.channelTimeout * 1000
    if (next && due < v.expiresAt) await r.workflows.setDue(v.seq, k + 1, due)
    const after: Verification = {
      ...v,
      channel: step.channel,
      delivery: test ? null : 'sending',
      deliveryProvider: null,
      deliveryUpdatedAt: test ? null : now,
      deliveryRef: null,
      deliveryLanguage: null,
      deliveryError: null,
    }
    if (sms) after.sms = sms as Verification['sms']
    else delete after.sms
    await emit(r, 'verification.fallback', after, now, { from: steps[from]!.channel, to: step.channel, reason: why, step: k })
    return { kind: 'started', v: after, step: k, message, from: steps[from]!.channel, reason: why }
  }
}
