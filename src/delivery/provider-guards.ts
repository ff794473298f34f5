/**
 * The guards of every provider (provider-guard.ts), by provider name, kept for
 * the server's life: a reload gives them new settings but keeps their slots in
 * use and their circuits. Each circuit change is one log line
 * (docs/delivery.md#circuit-breaking); the snapshot feeds /metrics, /readyz
 * and the console's System page.
 */
import type { Logger } from '../lib/logger.ts'
import { ProviderGuard, type CircuitChange, type CircuitState, type GuardSettings } from './provider-guard.ts'

/** One provider's state, as /metrics, /readyz and the console show it. */
export interface GuardView {
  provider: string
  circuit: CircuitState
  inFlight: number
  waiting: number
  maxInFlight: number
}

const CHANGE_TEXT: Record<CircuitState, string> = {
  open: 'provider circuit opened: the provider is skipped until its cool-down ends',
  half_open: 'provider circuit half-open: the next send probes the provider',
  closed: 'provider circuit closed: the provider answered again',
}

export class ProviderGuards {
  private readonly guards = new Map<string, ProviderGuard>()
  /** The providers of the config in force, which views() lists; null: every guard made so far. */
  private named: string[] | null = null

  constructor(
    private settingsOf: (provider: string) => GuardSettings,
    private readonly now: () => number,
    private readonly logger: Logger,
    private readonly onChange: (c: CircuitChange) => void = () => {},
  ) {}

  /** The provider's guard, made on first use with the settings in force. */
  of(provider: string): ProviderGuard {
    let g = this.guards.get(provider)
    if (!g) {
      g = new ProviderGuard(provider, this.settingsOf(provider), this.now, (c) => this.changed(c))
      this.guards.set(provider, g)
    }
    return g
  }

  /**
   * A config's settings, for the guards made so far and those made later, and
   * its providers, which views() lists from now on (a provider a reload
   * removed keeps its guard for the requests it still has under way, unlisted).
   */
  configure(settingsOf: (provider: string) => GuardSettings, providers?: readonly string[]): void {
    this.settingsOf = settingsOf
    for (const [name, g] of this.guards) g.configure(settingsOf(name))
    if (providers) this.named = [...new Set(providers)]
  }

  /** The providers in force (every guard made so far, when none were named), by name. */
  views(): GuardView[] {
    const guards = this.named === null ? [...this.guards.values()] : this.named.map((name) => this.of(name))
    return guards
      .map((g) => ({ provider: g.provider, circuit: g.circuit, inFlight: g.inFlight, waiting: g.waiting, maxInFlight: g.settings.maxInFlight }))
      .sort((a, b) => a.provider.localeCompare(b.provider))
  }

  private changed(c: CircuitChange): void {
    // info, not warn: repeated warnings are held back (lib/logger.ts), and every change gets its line.
    this.logger.info(CHANGE_TEXT[c.to], { provider: c.provider, circuit: c.to, from: c.from, consecutive_failures: c.failures })
    this.onChange(c)
  }
}
