/**
 * The outbox's depth as the ceiling on queued events reads it
 * (docs/events.md#a-ceiling-on-queued-events): counted by the dispatcher at
 * its passes, at most once a second, so that a send compares two numbers and
 * never reads the database. On several nodes each node counts the shared
 * outbox at its own passes: the ceiling holds to within a pass.
 */
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import type { Storage } from '../otp/ports/index.ts'

/** The count is read again at most this often (injected clock). */
export const QUEUED_EVERY_MS = 1_000
/** ...and at most one part in this of the time (a deep outbox costs more to count): under 2 % of a core. */
const COST_SHARE = 50

export interface QueuedDeps {
  storage: Storage
  clock: Clock
  logger: Logger
}

export class QueuedCount {
  /** Deliveries pending at the last count, counted up to the ceiling then in force. */
  value = 0
  private nextAt = -Infinity

  constructor(private readonly d: QueuedDeps) {}

  /** Counts again (up to `max`) when the last count is old enough, or with `force`; a failed read keeps the last count. */
  async refresh(max: number, force = false): Promise<void> {
    const now = this.d.clock.now()
    if (!force && now < this.nextAt) return
    const started = performance.now()
    try {
      this.value = await this.d.storage.read((r) => r.webhooks.queuedUpTo(max))
    } catch (err) {
      this.d.logger.warn('could not count the queued webhook deliveries; the last count stands', { error: err instanceof Error ? err.message : String(err) })
    }
    this.nextAt = now + Math.max(QUEUED_EVERY_MS, COST_SHARE * (performance.now() - started))
  }
}
