/**
 * One pass of the delivery loop (docs/events.md#how-delivery-works): due
 * deliveries are leased in fair turns (store/sql/fair-turns.ts), at most a
 * set number per endpoint, and sent at once; as each try ends its slot is
 * filled again: the outcomes that ended meanwhile are recorded, if their
 * owner still holds the lease, in the write that leases the next ones. No
 * try waits for another, so an endpoint that hangs holds its own slots
 * only. The pass ends when nothing is in flight and the claim finds nothing.
 */
import type { Logger } from '../lib/logger.ts'
import type { DueDelivery, Storage } from '../otp/ports/index.ts'
import { type Attempt, type AttemptDeps, tryDelivery } from './attempt.ts'
import { EVENT_TIMEOUT_MS } from './post.ts'

/** Longer than a request can take, with room for the record's transaction. */
export const LEASE_MS = EVENT_TIMEOUT_MS + 5_000
/** At most this many leased by one write. */
export const CLAIM_BATCH = 32
/** While tries are in flight and nothing is claimable, the claim is tried again this often (a new event waits at most this long). */
export const POLL_MS = 200
/**
 * While tries are in flight, a write waits up to GATHER_MS for GATHER of them
 * to end, so that one commit records (and refills) several slots instead of
 * one: a commit per try took the writer from the API's sends and verifies
 * (docs/benchmarks.md#slow-webhook-endpoints).
 */
export const GATHER = CLAIM_BATCH
export const GATHER_MS = 50

/** The dispatcher's slots for tries in flight, shared by its passes. */
export interface Slots {
  max: number
  used: number
}

export interface PassDeps extends AttemptDeps {
  storage: Storage
  logger: Logger
  slots: Slots
  /** Deliveries in flight to one endpoint, over every process. */
  perEndpoint: number
  stopping(): boolean
  /** Counts and logs a recorded outcome. */
  report(a: Attempt): void
  /** Called between writes and waits of a pass (the expiry scan and the outbox's count keep their pace). */
  meanwhile(passStartedAt: number): Promise<unknown>
}

/** Runs one pass; returns how many tries it made. */
export function deliverDue(d: PassDeps): Promise<number> {
  return new DeliveryPass(d).run()
}

class DeliveryPass {
  private inFlight = 0
  private tried = 0
  /** Tries ended and not yet recorded. */
  private readonly done: Attempt[] = []
  /** Whether a claim may find something: its last one was full, or a try has ended (an endpoint's slot freed) since. */
  private mayClaim = true
  /** A write failed: the pass leases nothing more, and ends once its tries have ended. */
  private broken = false
  private ended = 0
  private wake: (() => void) | null = null

  constructor(private readonly d: PassDeps) {}

  async run(): Promise<number> {
    const { d } = this
    const startedAt = d.clock.now()
    if (!(await this.hasDue())) return 0
    let fresh = true
    for (;;) {
      const claim = this.mayClaim && !this.broken && !d.stopping() ? Math.min(CLAIM_BATCH, d.slots.max - d.slots.used) : 0
      // A write that would only lease is read for first: the claim's read costs no write when nothing is due.
      if (this.done.length === 0 && claim > 0 && !fresh) {
        const endedBefore = this.ended
        if (!(await this.hasDueMeanwhile())) {
          // A try that ended during the read freed a slot the read did not see.
          this.mayClaim = this.ended !== endedBefore
          continue
        }
      }
      fresh = false
      if (this.done.length > 0 || claim > 0) {
        if (this.inFlight > 0 && !this.broken) await this.gather()
        await this.write(this.mayClaim && !this.broken && !d.stopping() ? Math.min(CLAIM_BATCH, d.slots.max - d.slots.used) : 0)
        await d.meanwhile(startedAt)
        continue
      }
      if (this.inFlight === 0) return this.tried
      await this.nextEndOrPoll()
      await d.meanwhile(startedAt)
    }
  }

  private hasDue(): Promise<boolean> {
    const { d } = this
    return d.storage.read((r) => r.webhooks.hasDue(d.clock.now(), d.perEndpoint))
  }

  /** hasDue during the pass: a failed read leases nothing more, and the tries in flight are still recorded. */
  private async hasDueMeanwhile(): Promise<boolean> {
    return this.hasDue().catch((err: unknown) => {
      this.broken = true
      this.d.logger.warn('could not read the due webhook deliveries; the next pass tries again', { error: err instanceof Error ? err.message : String(err) })
      return false
    })
  }

  /** Records the tries that ended, in endpoint order (PostgreSQL locks their endpoints' rows in one order), and leases up to `claim` more. */
  private async write(claim: number): Promise<void> {
    const { d } = this
    const results = this.done.splice(0).sort((a, b) => a.result.endpointId - b.result.endpointId)
    const owner = crypto.randomUUID()
    const endedBefore = this.ended
    const out = await d.storage
      .write(async (r) => {
        const recorded: boolean[] = []
        for (const x of results) recorded.push(await r.webhooks.finish(x.result))
        const now = d.clock.now()
        const due = claim > 0 ? await r.webhooks.claim(now, now + LEASE_MS, owner, claim, d.perEndpoint) : []
        return { recorded, due }
      })
      .catch((err: unknown) => {
        this.broken = true
        const error = err instanceof Error ? err.message : String(err)
        // The leases run out and the deliveries are tried again: at least once.
        for (const x of results) d.logger.error('could not record a webhook delivery; it will be sent again', { event: x.eventId, error })
        if (results.length === 0) d.logger.warn('could not lease webhook deliveries; the next pass tries again', { error })
        return { recorded: results.map(() => false), due: [] as DueDelivery[] }
      })
    results.forEach((x, i) => {
      if (out.recorded[i]) d.report(x)
    })
    for (const x of out.due) this.launch(x, owner)
    if (claim > 0) this.mayClaim = out.due.length === claim || this.ended !== endedBefore
  }

  private launch(x: DueDelivery, owner: string): void {
    const { d } = this
    this.inFlight++
    this.tried++
    d.slots.used++
    void tryDelivery(d, x, owner).then((a) => {
      this.inFlight--
      d.slots.used--
      this.ended++
      this.done.push(a)
      this.mayClaim = true
      this.wake?.()
    })
  }

  /** Until GATHER tries have ended (or every one in flight), or GATHER_MS. */
  private gather(): Promise<void> {
    if (this.done.length >= GATHER || this.inFlight === 0) return Promise.resolve()
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer)
        this.wake = null
        resolve()
      }
      const timer = setTimeout(finish, GATHER_MS)
      this.wake = () => {
        if (this.done.length >= GATHER || this.inFlight === 0) finish()
      }
    })
  }

  /** Until a try ends, or POLL_MS (a real timer: the claim is tried again for events that came meanwhile). */
  private nextEndOrPoll(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null
        this.mayClaim = true
        resolve()
      }, POLL_MS)
      this.wake = () => {
        clearTimeout(timer)
        this.wake = null
        resolve()
      }
    })
  }
}
