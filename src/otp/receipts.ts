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
import type { Storage } from './ports/index.ts'
import { decideStatus } from './status.ts'
import type { ReceiptState, Verification } from './types.ts'

/** A receipt as it arrived; the delivery layer's readers (delivery/receipts.ts) check and read it. */
export interface ReceiptRequest {
  /**
   * The URL the vendor called, as otpd gave it: `server.public_url` and the
   * path and query as received (never the Host header, which anyone sets).
   */
  url: string
  /** Header look-up by lower-case name (a fetch `Headers` fits). */
  headers: { get(name: string): string | null }
  /** The raw body. */
  body: string
}

export type ReceiptReading =
  /** Missing or wrong signature: 403, nothing changes. */
  | { kind: 'forged' }
  /** Signed, but the body is not what the gateway promised (the webhook provider's JSON). */
  | { kind: 'malformed'; reason: 'json' | 'object' }
  /** Signed; `state` null when the vendor's status moves nothing (queued, sent...), `verificationId` null when absent. */
  | { kind: 'signed'; verificationId: string | null; state: ReceiptState | null }

/** Checks one provider's receipts: its vendor's signature, then its status. */
export interface ReceiptReader {
  read(req: ReceiptRequest): ReceiptReading
}

export interface Receipt {
  /** The provider's name in the config, from the receipt's path. */
  provider: string
  verificationId: string
  state: ReceiptState
}

/** `recorded`: the status changed (and its event was written); `ignored`: unknown message, or a status that no longer moves. */
export type ReceiptOutcome = 'recorded' | 'ignored'

export interface ReceiptDeps {
  storage: Storage
  ids: VerificationIds
  clock: Clock
}

export class ReceiptService {
  constructor(private readonly d: ReceiptDeps) {}

  async record(receipt: Receipt): Promise<ReceiptOutcome> {
    const { d } = this
    const seq = d.ids.seqOf(receipt.verificationId)
    if (seq === null) return 'ignored'
    return d.storage.write(async (r): Promise<ReceiptOutcome> => {
      const v = await r.verifications.findById(receipt.verificationId, seq)
      // Test recipients have no delivery, and so no receipt.
      if (!v || v.testMode !== null) return 'ignored'
      const now = d.clock.now()
      if (!(await r.verifications.recordReceipt(v.seq, receipt.state, receipt.provider, now))) return 'ignored'
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
      const after: Verification = { ...v, delivery: receipt.state, deliveryProvider: receipt.provider, deliveryUpdatedAt: now }
      await emit(r, receipt.state === 'delivered' ? 'verification.delivered' : 'verification.undelivered', after, now, extra, status)
      return 'recorded'
    })
  }
}
