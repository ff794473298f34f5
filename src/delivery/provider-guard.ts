/**
 * What stands around one provider (docs/delivery.md#slow-providers): its slots
 * (`max_in_flight` requests at once, a bounded wait for a free one) and its
 * circuit (closed; open for a cool-down after consecutive failures or
 * timeouts; then half-open, letting one probe through). The state lives as
 * long as the server, across reloads (provider-guards.ts), so a reload neither
 * forgets an outage nor lets a provider exceed its slots.
 */

export type CircuitState = 'closed' | 'open' | 'half_open'

export interface GuardSettings {
  /** Requests to this provider at once (`max_in_flight`). */
  maxInFlight: number
  /** The longest one attempt may take, its wait for a slot included (`timeout_ms`). */
  timeoutMs: number
  /** Consecutive failures or timeouts that open the circuit (`delivery.circuit_failures`). */
  circuitFailures: number
  /** How long an open circuit skips the provider before one probe (`delivery.circuit_cooldown_ms`). */
  coolDownMs: number
}

/** What the circuit lets an attempt do: go as usual, go as the one probe, or skip the provider. */
export type Pass = 'go' | 'probe' | 'skip'

/** A change of circuit state, for the log line and the metrics. */
export interface CircuitChange {
  provider: string
  from: CircuitState
  to: CircuitState
  failures: number
}

interface Waiter {
  grant: (release: () => void) => void
  timer: ReturnType<typeof setTimeout>
}

export class ProviderGuard {
  private inFlightNow = 0
  private readonly waiters: Waiter[] = []
  private state: CircuitState = 'closed'
  private failures = 0
  private openUntil = 0
  private probing = false

  constructor(
    readonly provider: string,
    private settingsNow: GuardSettings,
    private readonly now: () => number,
    private readonly onChange: (c: CircuitChange) => void,
  ) {}

  get settings(): GuardSettings {
    return this.settingsNow
  }

  /** New settings (a reload): a raised limit serves waiters at once; a lowered one lets requests in flight finish. */
  configure(settings: GuardSettings): void {
    this.settingsNow = settings
    this.handOn()
  }

  get inFlight(): number {
    return this.inFlightNow
  }

  get waiting(): number {
    return this.waiters.length
  }

  /** The circuit as it is now: an open one whose cool-down ended is half-open. */
  get circuit(): CircuitState {
    if (this.state === 'open' && this.now() >= this.openUntil) this.move('half_open')
    return this.state
  }

  /** May an attempt go? Once half-open, only one probe at a time; the others skip. */
  admit(): Pass {
    const state = this.circuit
    if (state === 'closed') return 'go'
    if (state === 'open' || this.probing) return 'skip'
    this.probing = true
    return 'probe'
  }

  /** A probe that never went (no slot): the next attempt may probe instead. */
  abandonProbe(): void {
    this.probing = false
  }

  /**
   * A slot within `waitMs`: resolves with its release, or null when none
   * freed in time. Waiters are served in their order of arrival.
   */
  slot(waitMs: number): Promise<(() => void) | null> {
    if (this.inFlightNow < this.settingsNow.maxInFlight && this.waiters.length === 0) return Promise.resolve(this.take())
    if (waitMs <= 0) return Promise.resolve(null)
    return new Promise((resolve) => {
      const waiter: Waiter = {
        grant: (release) => resolve(release),
        timer: setTimeout(() => {
          const i = this.waiters.indexOf(waiter)
          if (i >= 0) this.waiters.splice(i, 1)
          resolve(null)
        }, waitMs),
      }
      this.waiters.push(waiter)
    })
  }

  /** The outcome of an attempt that went: a failure or timeout counts toward opening the circuit; any answer closes it. */
  record(ok: boolean, probe: boolean): void {
    if (probe) this.probing = false
    if (ok) {
      this.failures = 0
      if (this.state !== 'closed') this.move('closed')
      return
    }
    this.failures++
    if (probe || (this.state === 'closed' && this.failures >= this.settingsNow.circuitFailures)) {
      this.openUntil = this.now() + this.settingsNow.coolDownMs
      this.move('open')
    }
  }

  private take(): () => void {
    this.inFlightNow++
    let released = false
    return () => {
      if (released) return
      released = true
      this.inFlightNow--
      this.handOn()
    }
  }

  /** A freed slot goes to the longest waiter, if the limit (which a reload may have lowered) allows. */
  private handOn(): void {
    while (this.waiters.length > 0 && this.inFlightNow < this.settingsNow.maxInFlight) {
      const w = this.waiters.shift()!
      clearTimeout(w.timer)
      w.grant(this.take())
    }
  }

  private move(to: CircuitState): void {
    const from = this.state
    if (from === to) return
    this.state = to
    this.onChange({ provider: this.provider, from, to, failures: this.failures })
  }
}
