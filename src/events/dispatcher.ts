/**
 * The delivery loop of the event outbox (docs/api.md#events), started
 * by `otpd serve`. Each pass leases the due deliveries in a write transaction
 * (another process or node skips a leased one until its lease ends, so one
 * sender at a time), POSTs them signed afresh (same `webhook-id`, a new
 * `webhook-timestamp`), and records each outcome if it still holds the lease.
 *
 * At least once: a process killed between the POST and the record leaves a
 * lease that runs out; the delivery is then sent again. The lease outlasts
 * the request timeout, so a live sender's lease never runs out under it.
 *
 * The schedule reads the injected clock; only the pause between passes is a
 * real timer.
 */
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import { reportExpired } from '../otp/events.ts'
import type { DueDelivery, Storage } from '../otp/ports/index.ts'
import { ROTATION_OVERLAP_MS, type SecretSealer } from '../otp/webhooks.ts'
import { EVENT_TIMEOUT_MS, postEvent, type PostEvent, type PostResult } from './post.ts'
import { nextTry } from './schedule.ts'
import { signedHeaders } from './sign.ts'

/** Longer than a request can take, with room for the record's transaction. */
export const LEASE_MS = EVENT_TIMEOUT_MS + 5_000
/** Deliveries leased per pass (they are sent concurrently). */
const BATCH = 32
const PASS_EVERY_MS = 1_000
/** Expiries are reported within 2 min of expires_at: a scan every 30 s keeps well inside. */
const EXPIRY_SCAN_EVERY_MS = 30_000

export type DeliveryOutcome = 'delivered' | 'retry' | 'failed'

export interface DispatcherDeps {
  storage: Storage
  clock: Clock
  logger: Logger
  sealer: SecretSealer
  post?: PostEvent
  random?: () => number
  onOutcome?: (outcome: DeliveryOutcome) => void
}

export class EventDispatcher {
  private timer: ReturnType<typeof setTimeout> | undefined
  private running = false
  private current: Promise<unknown> = Promise.resolve()
  private lastExpiryScan = -Infinity

  constructor(private readonly d: DispatcherDeps) {}

  /**
   * One pass: every due delivery is leased, tried once and recorded.
   * Returns how many were tried.
   */
  async deliverDue(): Promise<number> {
    const { d } = this
    const now = d.clock.now()
    if (!(await d.storage.read((r) => r.webhooks.hasDue(now)))) return 0
    const owner = crypto.randomUUID()
    const due = await d.storage.write((r) => r.webhooks.claim(d.clock.now(), d.clock.now() + LEASE_MS, owner, BATCH))
    await Promise.all(due.map((x) => this.attempt(x, owner)))
    return due.length
  }

  private async attempt(x: DueDelivery, owner: string): Promise<void> {
    const { d } = this
    const now = d.clock.now()
    let result: PostResult
    try {
      const secrets = [d.sealer.open(x.secret)]
      if (x.prevSecret !== null && x.rotatedAt !== null && now < x.rotatedAt + ROTATION_OVERLAP_MS) secrets.push(d.sealer.open(x.prevSecret))
      result = await (d.post ?? postEvent)(x.url, signedHeaders(secrets, x.eventId, Math.floor(now / 1000), x.body), x.body)
    } catch (err) {
      // A secret that cannot be opened: a failed try like any other, on the same schedule.
      result = { ok: false, error: err instanceof Error ? err.message : String(err) }
    }
    const at = d.clock.now()
    const attempts = x.attempts + 1
    const next = result.ok ? null : nextTry(attempts, at, x.firstAt, (d.random ?? Math.random)())
    const outcome: DeliveryOutcome = result.ok ? 'delivered' : next === null ? 'failed' : 'retry'
    const recorded = await d.storage
      .write((r) =>
        r.webhooks.finish({
          eventSeq: x.eventSeq,
          endpointId: x.endpointId,
          owner,
          status: outcome === 'retry' ? 'pending' : outcome,
          attempts,
          nextAt: next ?? at,
          error: result.ok ? null : result.error,
          at,
        }),
      )
      .catch((err: unknown) => {
        // The lease runs out and the delivery is tried again: at least once.
        d.logger.error('could not record a webhook delivery; it will be sent again', {
          event: x.eventId,
          error: err instanceof Error ? err.message : String(err),
        })
        return false
      })
    if (!recorded) return
    d.onOutcome?.(outcome)
    if (outcome === 'failed')
      d.logger.warn('webhook delivery failed for good after 24 h of retries', {
        event: x.eventId,
        endpoint: x.endpointId,
        error: result.ok ? null : result.error,
      })
    else if (outcome === 'retry')
      d.logger.info('webhook delivery failed; will retry', { event: x.eventId, endpoint: x.endpointId, attempts, error: result.ok ? null : result.error })
  }

  /** Reports expiries (otp/events.ts reportExpired) when the last scan is 30 s old. */
  async scanExpired(force = false): Promise<number> {
    const now = this.d.clock.now()
    if (!force && now - this.lastExpiryScan < EXPIRY_SCAN_EVERY_MS) return 0
    this.lastExpiryScan = now
    return reportExpired(this.d.storage, this.d.clock)
  }

  /** Runs passes until stop(); a failed pass is logged and the next one comes anyway. */
  start(): void {
    if (this.running) return
    this.running = true
    const pass = async () => {
      try {
        await this.scanExpired()
        while (this.running && (await this.deliverDue()) === BATCH);
      } catch (err) {
        this.d.logger.error('webhook delivery pass failed', { error: err instanceof Error ? err.message : String(err) })
      }
    }
    const loop = () => {
      if (!this.running) return
      this.current = pass().finally(() => {
        if (this.running) this.timer = setTimeout(loop, PASS_EVERY_MS)
      })
    }
    loop()
  }

  /** Stops the passes and waits for the one under way (its requests end within their timeout). */
  async stop(): Promise<void> {
    this.running = false
    if (this.timer) clearTimeout(this.timer)
    await this.current
  }
}
