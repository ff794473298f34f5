/**
 * The settings every provider table takes whatever its type
 * (docs/configuration.md#providers): `max_in_flight` and `timeout_ms`, with
 * the circuit's thresholds from `[delivery]`.
 */
import type { Config } from '../config/schema.ts'
import { ProviderOptions } from './options.ts'
import type { GuardSettings } from './provider-guard.ts'

/** High enough that, by default, `delivery.max_sends_in_flight` is the limit a burst meets first. */
export const DEFAULT_MAX_IN_FLIGHT = 10_000
const MAX_IN_FLIGHT = 100_000

/** Reads (and checks, recording problems in `o`) the keys every provider type takes. */
export function readGuardKeys(o: ProviderOptions, delivery: Config['delivery'] | undefined): GuardSettings {
  // `delivery` is missing only when `config check` found that table wrong: the defaults stand in.
  const d = delivery ?? { timeout_ms: 10_000, circuit_failures: 5, circuit_cooldown_ms: 30_000 }
  return {
    maxInFlight: o.integer('max_in_flight', 1, MAX_IN_FLIGHT, DEFAULT_MAX_IN_FLIGHT),
    timeoutMs: o.integer('timeout_ms', 100, 300_000, d.timeout_ms),
    circuitFailures: d.circuit_failures,
    coolDownMs: d.circuit_cooldown_ms,
  }
}

/** Each provider's settings under `config` (the built-in `log` fallback gets the defaults). Assumes the config was checked. */
export function guardSettingsOf(config: Config): (provider: string) => GuardSettings {
  return (provider) => {
    const table = Object.hasOwn(config.providers, provider) ? config.providers[provider]! : {}
    return readGuardKeys(new ProviderOptions(provider, table, {}), config.delivery)
  }
}
