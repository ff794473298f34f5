/**
 * Recovery of sends whose delivery outcome was never recorded (the process
 * stopped between a send's two transactions, or the second failed): still
 * `sending` with its debit and older than the delivery budget and a margin, no
 * process can still be delivering it, so it is refunded and settled `unknown`;
 * its code stays verifiable, as it may have been delivered. Each refund is its
 * own transaction that checks the send is still `sending` (two nodes refund it
 * once) and settles its Idempotency-Key record with the 200 it holds.
 */
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import type { Storage } from './ports/index.ts'
import { refundUnsettled } from './settlement.ts'

/** Past the delivery budget: room for the outcome's own transaction and for clocks a little apart. */
export const RECOVERY_MARGIN_MS = 2_000
const PAGE = 200

export interface RecoveryDeps {
  storage: Storage
  clock: Clock
  logger: Logger
  /** `delivery.timeout_ms`: no delivery lasts longer. */
  deliveryTimeoutMs: number
}

/** Refunds every unsettled send old enough; returns how many this call refunded. */
export async function recoverUnsettledSends(d: RecoveryDeps): Promise<number> {
  const before = d.clock.now() - d.deliveryTimeoutMs - RECOVERY_MARGIN_MS
  let refunded = 0
  for (;;) {
    const page = await d.storage.read((r) => r.verifications.unsettled(before, PAGE))
    for (const v of page) {
      if (await refundUnsettled(d.storage, v, 'unknown', d.clock.now())) refunded++
    }
    if (page.length < PAGE) break
  }
  if (refunded > 0) {
    d.logger.warn(
      'refunded sends whose delivery outcome was never recorded (the process stopped during delivery); their codes stay verifiable until they expire',
      {
        refunded,
      },
    )
  }
  return refunded
}
