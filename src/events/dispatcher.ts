/**
 * The delivery loop of the event outbox (docs/api.md#events), started by `otpd
 * serve`. Each pass leases the due deliveries in a write transaction (one sender
 * at a time across processes and nodes), POSTs them signed afresh (same
 * `webhook-id`, new `webhook-timestamp`), and records each outcome, if it still
 * holds the lease, in the write that leases the next batch: one commit's wait a
 * batch. At least once: a sender killed before the record leaves a lease that
 * runs out, and the delivery goes again; a lease outlasts the request timeout.
 * The schedule reads the injected clock; only the pause between passes is a timer.
 */
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import { reportExpired } from '../otp/events.ts'
import type { DeliveryResult, DueDelivery, Storage } from '../otp/ports/index.ts'
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

interface Attempt {
  eventId: string
  outcome: DeliveryOutcome
  result: DeliveryResult
}

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
  /** Set by stop(): a pass under way leases no further batch. */
  private stopping = false
  private current: Promise<unknown> = Promise.resolve()
  private lastExpiryScan = -Infinity

  constructor(private readonly d: DispatcherDeps) {}

  /**
   * One pass: every due delivery is leased, tried once and recorded, batch
   * after batch until none is due. A batch's outcomes are recorded in the
   * same transaction that leases the next batch, so a batch costs one write
   * and one commit's wait. Returns how many were tried.
   */
  async deliverDue(): Promise<number> {
    const { d } = this
    if (!(await d.storage.read((r) => r.webhooks.hasDue(d.clock.now())))) return 0
    let owner = crypto.randomUUID()
    let due = await d.storage.write((r) => r.webhooks.claim(d.clock.now(), d.clock.now() + LEASE_MS, owner, BATCH))
    let tried = 0
    while (due.length > 0) {
      const results = await Promise.all(due.map((x) => this.attempt(x, owner)))
      tried += due.length
      const nextOwner = crypto.randomUUID()
      const more = due.length === BATCH && !this.stopping
      const out = await d.storage
        .write(async (r) => {
          const recorded: boolean[] = []
          for (const x of results) recorded.push(await r.webhooks.finish(x.result))
          const next = more ? await r.webhooks.claim(d.clock.now(), d.clock.now() + LEASE_MS, nextOwner, BATCH) : []
          return { recorded, next }
        })
        .catch((err: unknown) => {
          // The leases run out and the deliveries are tried again: at least once.
          for (const x of results)
            d.logger.error('could not record a webhook delivery; it will be sent again', {
              event: x.eventId,
              error: err instanceof Error ? err.message : String(err),
            })
          return { recorded: results.map(() => false), next: [] }
        })
      results.forEach((x, i) => {
        if (out.recorded[i]) this.report(x)
      })
      owner = nextOwner
      due = out.next
      // A long backlog still gets its expiries reported on time.
      if (due.length > 0) await this.scanExpired()
    }
    return tried
  }

  /** One try of a leased delivery: its outcome, to be recorded while `owner` holds the lease. */
  private async attempt(x: DueDelivery, owner: string): Promise<Attempt> {
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
    const error = result.ok ? null : result.error
    return {
      eventId: x.eventId,
      outcome,
      result: {
        eventSeq: x.eventSeq,
        endpointId: x.endpointId,
        owner,
        status: outcome === 'retry' ? 'pending' : outcome,
        attempts,
        nextAt: next ?? at,
        error,
        at,
      },
    }
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

  /** Runs passes until stop(); a failed pass is logged and the next one comes anyway. */
  start(): void {
    if (this.running) return
    this.running = true
    this.stopping = false
    const pass = async () => {
      try {
        await this.scanExpired()
        await this.deliverDue()
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
    this.stopping = true
    if (this.timer) clearTimeout(this.timer)
    await this.current
  }
}
