/**
 * The delivery loop of the event outbox (docs/api.md#events,
 * docs/events.md#how-delivery-works), started by `otpd serve`. Each pass
 * (events/pass.ts) leases due deliveries in fair turns in a write transaction
 * (one sender at a time across processes and nodes), POSTs them signed afresh
 * (same `webhook-id`, new `webhook-timestamp`), and records each outcome, if
 * it still holds the lease, in the write that leases the next ones. At least
 * once: a sender killed before the record leaves a lease that runs out, and
 * the delivery goes again; a lease outlasts the request timeout. The schedule
 * reads the injected clock; only the pauses between claims are timers.
 */
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import { reportExpired } from '../otp/events.ts'
import type { Storage } from '../otp/ports/index.ts'
import type { SecretSealer } from '../otp/webhooks.ts'
import type { Attempt, DeliveryOutcome } from './attempt.ts'
import { deliverDue, POLL_MS, type Slots } from './pass.ts'
import type { PostEvent } from './post.ts'
import type { QueuedCount } from './queued.ts'

export type { DeliveryOutcome } from './attempt.ts'
export { LEASE_MS } from './pass.ts'
/** Expiries are reported within 2 min of expires_at: a scan every 30 s keeps well inside. */
const EXPIRY_SCAN_EVERY_MS = 30_000

/** `[events]` (docs/configuration.md#events): read at each pass, so a reload applies to the next. */
export interface EventSettings {
  /** Tries in flight in this process, all endpoints together. */
  maxInFlight: number
  /** Tries in flight to one endpoint, all processes together. */
  endpointMaxInFlight: number
  /** Deliveries pending, every endpoint together, past which sends are refused (docs/events.md#a-ceiling-on-queued-events). */
  maxQueued: number
}

export const DEFAULT_EVENT_SETTINGS: EventSettings = { maxInFlight: 256, endpointMaxInFlight: 64, maxQueued: 1_000_000 }

export interface DispatcherDeps {
  storage: Storage
  clock: Clock
  logger: Logger
  sealer: SecretSealer
  post?: PostEvent
  random?: () => number
  onOutcome?: (outcome: DeliveryOutcome) => void
  settings?: () => EventSettings
  /** The outbox's depth the send route reads (queued.ts), counted again at the passes. */
  queued?: QueuedCount
}

export class EventDispatcher {
  private timer: ReturnType<typeof setTimeout> | undefined
  private running = false
  /** Set by stop(): a pass under way leases nothing more. */
  private stopping = false
  private current: Promise<unknown> = Promise.resolve()
  private lastExpiryScan = -Infinity
  private readonly slots: Slots = { max: DEFAULT_EVENT_SETTINGS.maxInFlight, used: 0 }

  constructor(private readonly d: DispatcherDeps) {}

  /**
   * One pass: due deliveries are leased, tried and recorded, each freed slot
   * filled again, until nothing is in flight and nothing more is due.
   * Returns how many were tried.
   */
  async deliverDue(): Promise<number> {
    const settings = this.d.settings?.() ?? DEFAULT_EVENT_SETTINGS
    this.slots.max = settings.maxInFlight
    await this.d.queued?.refresh(settings.maxQueued)
    return deliverDue({
      ...this.d,
      slots: this.slots,
      perEndpoint: settings.endpointMaxInFlight,
      stopping: () => this.stopping,
      report: (a) => this.report(a),
      // A long pass still gets its expiries reported on time, and the outbox counted.
      meanwhile: async (startedAt) => {
        await this.d.queued?.refresh((this.d.settings?.() ?? DEFAULT_EVENT_SETTINGS).maxQueued)
        if (this.d.clock.now() - startedAt < EXPIRY_SCAN_EVERY_MS) return
        await this.scanExpired().catch((err: unknown) => this.logFailure(err))
      },
    })
  }

  /** Counts and logs a recorded outcome. */
  private report(x: Attempt): void {
    const { d } = this
    const { outcome, result: r } = x
    d.onOutcome?.(outcome)
    if (outcome === 'failed')
      d.logger.warn('webhook delivery failed for good after 24 h of retries', { event: x.eventId, endpoint: r.endpointId, error: r.error })
    else if (outcome === 'retry')
      d.logger.info('webhook delivery failed; will retry', { event: x.eventId, endpoint: r.endpointId, attempts: r.attempts, error: r.error })
  }

  /** Reports expiries (otp/events.ts reportExpired) when the last scan is 30 s old. */
  async scanExpired(force = false): Promise<number> {
    const now = this.d.clock.now()
    if (!force && now - this.lastExpiryScan < EXPIRY_SCAN_EVERY_MS) return 0
    this.lastExpiryScan = now
    return reportExpired(this.d.storage, this.d.clock)
  }

  private logFailure(err: unknown): void {
    this.d.logger.error('webhook delivery pass failed', { error: err instanceof Error ? err.message : String(err) })
  }

  /** Runs passes until stop(), POLL_MS apart; a failed pass is logged and the next one comes anyway. */
  start(): void {
    if (this.running) return
    this.running = true
    this.stopping = false
    const pass = async () => {
      try {
        await this.scanExpired()
        await this.deliverDue()
      } catch (err) {
        this.logFailure(err)
      }
    }
    const loop = () => {
      if (!this.running) return
      this.current = pass().finally(() => {
        if (this.running) this.timer = setTimeout(loop, POLL_MS)
      })
    }
    loop()
  }

  /** Stops the passes and waits for the one under way (its requests end within their timeout, and are recorded). */
  async stop(): Promise<void> {
    this.running = false
    this.stopping = true
    if (this.timer) clearTimeout(this.timer)
    await this.current
  }
}
