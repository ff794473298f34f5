/**
 * Recovery of sends whose delivery outcome was never recorded: the process
 * stopped (kill -9, power loss, a fatal flush) between a send's first
 * transaction and its second, or the second failed. Such a send is still
 * `sending` with its debit. Once it is older than the delivery time budget
 * and a margin, no process can still be delivering it: it is refunded and its
 * delivery recorded as `unknown`. Its code stays verifiable until it expires,
 * since it may have been delivered.
 *
 * Each refund is its own transaction that first checks the send is still
 * `sending`, so two processes (or nodes) recovering at once refund it once.
 * The same transaction settles the send's Idempotency-Key record, if any,
 * with the 200 it holds: the send is in force, and a replay answers it
 * instead of "still in progress" (idempotency.ts).
 */
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import type { Storage } from './ports/index.ts'
import { refundUnsettled } from './send.ts'

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
