/**
 * Delivery receipts (docs/api.md#delivery-receipts): a vendor's signed word that
 * a message reached the handset, or never will; the HTTP layer checks the
 * signature, this records it. A receipt names its verification by id (otpd put
 * it in what the vendor signs), so it finds its row even before the send has
 * recorded `accepted`, or after `unknown`. `delivered` and `undelivered` are
 * final: the first stays. Its event (docs/api.md#events) is written in the same
 * transaction.
 */
import type { Clock } from '../lib/clock.ts'
import type { VerificationIds } from '../lib/verification-id.ts'
import { emit } from './events.ts'
import type { StepRow, Storage } from './ports/index.ts'
import { decideStatus } from './status.ts'
import type { ReceiptState, VendorError, Verification } from './types.ts'

/** A receipt as it arrived; the delivery layer's readers (delivery/receipts.ts) check and read it. */
export interface ReceiptRequest {
  /**
   * The URL the vendor called, as otpd gave it: `server.public_url` and the
   * path and query as received (never the Host header, which anyone sets).
   */
  url: string
  /** Header look-up by lower-case name (a fetch `Headers` fits). */
  headers: { get(name: string): string | null }
  /** The raw body, as text (UTF-8). */
  body: string
  /** The raw body as received: what a signature over the bytes covers (Meta's X-Hub-Signature-256). */
  bytes: Uint8Array
}

/** One status of a receipt that carries several (Meta's notifications: docs/delivery.md#whatsapp-receipts). */
export interface ReceiptItem {
  /** The verification, when the vendor echoes otpd's id; else it is found by `ref`. */
  verificationId: string | null
  /** The vendor's id of the message. */
  ref: string | null
  /** Null when the vendor's status moves nothing. */
  state: ReceiptState | 'accepted' | null
  /** The vendor's error of an `undelivered` status. */
  error: VendorError | null
}

export type ReceiptReading =
  /** Missing or wrong signature: 403, nothing changes. */
  | { kind: 'forged' }
  /** Signed, but the body is not what the gateway promised (the webhook provider's JSON). */
  | { kind: 'malformed'; reason: 'json' | 'object' }
  /** Signed; `state` null when the vendor's status moves nothing (queued, sent...), `verificationId` null when absent. */
  | { kind: 'signed'; verificationId: string | null; state: ReceiptState | null; error?: VendorError | null }
  /** Signed, with any number of statuses, each for its own message. */
  | { kind: 'batch'; items: ReceiptItem[] }

/** Checks one provider's receipts: its vendor's signature, then its status. */
export interface ReceiptReader {
  read(req: ReceiptRequest): ReceiptReading
  /**
   * A vendor's subscription handshake (Meta's GET with `hub.challenge`): the
   * text to answer 200 with, or null for 403. Absent: the provider has none.
   */
  handshake?(query: URLSearchParams): string | null
}

export interface Receipt {
  /** The provider's name in the config, from the receipt's path. */
  provider: string
  /** Otpd's id of the verification, when the receipt carries it; else `ref` finds it. */
  verificationId: string | null
  ref?: string | null
  state: ReceiptState | 'accepted'
  error?: VendorError | null
}

/** `recorded`: the status changed (and its event was written); `ignored`: unknown message, or a status that no longer moves. */
export type ReceiptOutcome = 'recorded' | 'ignored'

export interface ReceiptDeps {
  storage: Storage
  ids: VerificationIds
  clock: Clock
  /** A workflow's current step is undelivered: its next step starts at once (otp/fallback.ts), after this receipt's commit; never rejects. */
  onUndelivered?: (target: { seq: number; id: string }) => Promise<void>
}

export class ReceiptService {
  constructor(private readonly d: ReceiptDeps) {}

  async record(receipt: Receipt): Promise<ReceiptOutcome> {
    const { d } = this
    const seq = receipt.verificationId === null ? null : d.ids.seqOf(receipt.verificationId)
    if (seq === null && !receipt.ref) return 'ignored'
    const done = await d.storage.write(async (r): Promise<{ outcome: ReceiptOutcome; advance?: { seq: number; id: string } }> => {
      // By otpd's own id when the vendor echoes it (it may outrun the send's record of the vendor's id), else by the vendor's.
      const target =
        seq !== null && receipt.verificationId !== null ? { seq, id: receipt.verificationId } : await r.verifications.findByRef(receipt.provider, receipt.ref!)
      const v = target && (await r.verifications.findById(target.id, target.seq))
      // Test recipients have no delivery, and so no receipt.
      if (!v || v.testMode !== null) return { outcome: 'ignored' }
      const steps = await r.workflows.steps(v.seq)
      const ended = endedStepOf(steps, v.deliveryProvider, receipt.provider)
      if (ended !== null) {
        // A workflow's earlier step (docs/api.md#workflows): its own row takes the final status; the current step is untouched.
        const moved = receipt.state !== 'accepted' && (await r.workflows.stepReceipt(v.seq, ended, receipt.state))
        return { outcome: moved ? 'recorded' : 'ignored' }
      }
      const now = d.clock.now()
      const recorded = { state: receipt.state, provider: receipt.provider, at: now, ref: receipt.ref ?? null, error: receipt.error ?? null }
      if (!(await r.verifications.recordReceipt(v.seq, recorded))) return { outcome: 'ignored' }
      // A receipt changes no status; a canceled verification still takes one (the message went out).
      const status = decideStatus(v, now, false)
      const extra = { provider: receipt.provider }
      // A receipt that outran the send's own record of `accepted` (which now
      // changes nothing, and so reports nothing) first says what that record
      // would have: a provider took the message. So does one for an `unknown`
      // delivery (recovery wrote no event for it).
      if (v.delivery === 'sending' || v.delivery === 'unknown') {
        await emit(r, 'verification.sent', { ...v, delivery: 'accepted', deliveryProvider: receipt.provider, deliveryUpdatedAt: now }, now, extra, status)
        // A provider took it: the send is in force, and its Idempotency-Key
        // record (if any) holds the 200 it answers. Settled here, since the
        // send's own settle (or recovery, which only looks at `sending`) may never come.
        await r.idempotency.settle(v.seq, null)
      }
      if (receipt.state === 'accepted') return { outcome: 'recorded' }
      const after: Verification = {
        ...v,
        delivery: receipt.state,
        deliveryProvider: receipt.provider,
        deliveryUpdatedAt: now,
        deliveryError: receipt.error ?? null,
      }
      // A vendor's error rides on the undelivered event: its code and title, never the number.
      const final = receipt.error ? { ...extra, error_code: receipt.error.code, error_title: receipt.error.title } : extra
      await emit(r, receipt.state === 'delivered' ? 'verification.delivered' : 'verification.undelivered', after, now, final, status)
      const advance = receipt.state === 'undelivered' && steps.length > 1 ? { seq: v.seq, id: v.id } : undefined
      return { outcome: 'recorded', advance }
    })
    // After the answer (the vendor does not wait for the next step's delivery), in its own
    // transaction: if it is lost, the step's `channel_timeout` starts the next one all the same.
    if (done.advance && d.onUndelivered) void d.onUndelivered(done.advance)
    return done.outcome
  }
}

/**
 * The workflow step an ended step's receipt is about: the last started step,
 * other than the current one, that this provider took; null when the receipt
 * is the current step's (its provider took it, or it is still `sending`
 * through a provider no earlier step used) or there is no workflow.
 */
function endedStepOf(steps: StepRow[], currentProvider: string | null, provider: string): number | null {
  if (steps.length === 0) return null
  const current = steps.findLastIndex((s) => s.startedAt !== null)
  if (currentProvider === provider && steps[current]?.endedAt === null) return null
  const earlier = steps.findLast((s) => s.step !== current && s.startedAt !== null && s.provider === provider)
  return earlier ? earlier.step : null
}
