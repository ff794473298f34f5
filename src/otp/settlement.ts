/**
 * A send's second transaction: the delivery's outcome recorded (accepted), or
 * the send refunded (failed, or unknown after a stop: recovery.ts). An
 * accepted outcome touches only its verification's rows, so it goes by
 * `writeShared`: the engine may commit it with other sends' outcomes.
 */
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import { emit } from './events.ts'
import type { DeliveryFailure, Storage, StoredAnswer } from './ports/index.ts'
import type { Channel, DeliveryDetail, Verification } from './types.ts'

export interface SettlementDeps {
  storage: Storage
  clock: Clock
  logger: Logger
}

/** What a log line about one send says of it: never more of the recipient than its mask. */
interface SendNote {
  requestId: string
  channel: Channel
}

/**
 * No provider took it: refunded and out of use, unless settled first by
 * someone else. True when this call refunded it; false when it was settled
 * first and so is in force (its answer is then the send's 200).
 */
export async function settleFailed(d: SettlementDeps, v: Verification, err: unknown, note: SendNote, answer?: StoredAnswer): Promise<boolean> {
  // If this transaction fails, the send stays `sending` and recovery refunds it once the delivery timeout is past.
  // A provider that timed out after its request went out may still deliver:
  // the failed delivery names it (docs/delivery.md#slow-providers).
  const late = (err as Partial<DeliveryFailure> | null)?.mayStillDeliver
  const refunded = await refundUnsettled(d.storage, v, 'failed', d.clock.now(), answer, v, typeof late === 'string' ? late : null)
  // Settled first by recovery (as `unknown`, the code verifiable) or by the
  // provider's own receipt: a 500 would make the client send again for a
  // code that works and was charged.
  if (!refunded) return false
  d.logger.error('delivery failed; credit refunded', {
    request_id: note.requestId,
    channel: note.channel,
    recipient: v.recipientMask,
    error: err instanceof Error ? err.message : String(err),
  })
  return true
}

/**
 * The delivery's `accepted` record, with its event and its Idempotency-Key's
 * settlement. If it is lost, the send stays `sending` and recovery refunds it
 * as `unknown` (docs/operating.md#faults-and-recovery); never rejects.
 */
export function settleDelivered(
  d: SettlementDeps,
  v: Verification,
  provider: string,
  note: SendNote,
  idempotent: boolean,
  detail?: DeliveryDetail,
): Promise<void> {
  return d.storage
    .writeShared(async (r) => {
      const now = d.clock.now()
      // The row as it is now (a verify may already have used it), from the settlement itself.
      const settled = await r.verifications.settleDelivery(v.seq, 'accepted', provider, now, detail)
      if (settled) {
        // An SMS's encoding and segments ride on its event (docs/api.md#events), as does a WhatsApp template's language.
        const extra: Record<string, string | number> = settled.sms ? { provider, encoding: settled.sms.encoding, segments: settled.sms.segments } : { provider }
        if (settled.deliveryLanguage) extra.language = settled.deliveryLanguage
        await emit(r, 'verification.sent', settled, now, extra)
      }
      if (idempotent) await r.idempotency.settle(v.seq, null)
    })
    .catch((err: unknown) =>
      d.logger.error('delivered, but the outcome could not be recorded: recovery will record it as unknown and refund the credit', {
        request_id: note.requestId,
        channel: note.channel,
        recipient: v.recipientMask,
        error: err instanceof Error ? err.message : String(err),
      }),
    )
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
  /** A provider that timed out and may still deliver, recorded as the delivery's provider. */
  mayStillDeliver: string | null = null,
): Promise<boolean> {
  return storage.write(async (r) => {
    if (!(await r.verifications.settleDelivery(v.seq, state, mayStillDeliver, now))) {
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
      const after: Verification = (await r.verifications.findById(v.id, v.seq)) ?? {
        ...report,
        status: 'failed',
        delivery: 'failed',
        deliveryProvider: mayStillDeliver,
        deliveryUpdatedAt: now,
      }
      await emit(r, 'verification.delivery_failed', after, now)
    }
    await r.idempotency.settle(v.seq, answer ?? null)
    return true
  })
}
