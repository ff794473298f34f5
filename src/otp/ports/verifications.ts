/**
 * The verifications table as the send, verify, status, cancel, receipt and
 * recovery use cases need it.
 */
import type { DeliveryDetail, DeliveryState, ReceiptState, Verification, VendorError } from '../types.ts'

/** A receipt as recordReceipt writes it: `accepted` (Meta's `sent`) or a final status, with the vendor's id and error when it gave them. */
export interface RecordedReceipt {
  state: ReceiptState | 'accepted'
  provider: string
  at: number
  ref: string | null
  error: VendorError | null
}

/** A charged send whose delivery outcome was never recorded. */
export interface UnsettledSend {
  seq: number
  id: string
  accountId: number
}

export interface VerificationStore {
  /**
   * The row number for the next verification, drawn in the transaction that
   * inserts it. SQLite gives a number not inserted again; PostgreSQL draws
   * from a sequence, so a send refused after drawing leaves its number unused.
   */
  nextSeq(): Promise<number>
  insert(v: Verification): Promise<void>
  /**
   * The verification `id` names under this key: the row `seq` (read from the
   * id, null when it carries none) if that row has exactly this id, else one
   * made before ids carried row numbers.
   */
  findForKey(id: string, seq: number | null, keyId: number): Promise<Verification | undefined>
  /** Creation times (ascending) of non-test sends to a recipient since `since` that did not fail (canceled ones count). */
  recipientSendTimes(recipientHash: Uint8Array, since: number): Promise<number[]>
  markUsed(seq: number, at: number): Promise<void>
  /** Takes the verification out of use as `canceled` (verify then answers 404). */
  cancel(seq: number): Promise<void>
  setAttempts(seq: number, failedAttempts: number, lockedUntil: number | null): Promise<void>
  /**
   * Records how a delivery ended. `failed` also takes the verification out of
   * use (verify answers 404). Only a delivery still `sending` changes: the
   * row as it is after the change, or null when it had already been settled
   * (by recovery, or another node).
   */
  settleDelivery(
    seq: number,
    state: Exclude<DeliveryState, 'sending' | ReceiptState>,
    provider: string | null,
    at: number,
    detail?: DeliveryDetail,
  ): Promise<Verification | null>
  /** The verification row `seq` if it has exactly this id, whatever its key (delivery receipts carry no API key). */
  findById(id: string, seq: number): Promise<Verification | undefined>
  /**
   * Records a delivery receipt's final status. Only a delivery still
   * `sending`, or `accepted` by this same provider, changes: a final status
   * stays, and `failed`/`unknown` (refunded) are kept. False when nothing changed.
   */
  recordReceipt(seq: number, receipt: RecordedReceipt): Promise<boolean>
  /** The verification whose provider `provider` gave the message id `ref` (receipts that name only it). */
  findByRef(provider: string, ref: string): Promise<{ seq: number; id: string } | undefined>
  /** Charged sends still `sending` that were created at or before `before`, oldest first, at most `limit`. */
  unsettled(before: number, limit: number): Promise<UnsettledSend[]>
}
