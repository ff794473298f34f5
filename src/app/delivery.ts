/**
 * The server's delivery: the configured providers behind a channel router
 * (delivery/), swappable by a reload (reload.ts), and counted in the
 * metrics by the provider that took each send; and the readers of the
 * providers' delivery receipts.
 */
import { SwitchDelivery } from './reload.ts'
import type { Config } from '../config/schema.ts'
import { buildProviders, buildReceiptReaders, logOnlyChannels } from '../delivery/registry.ts'
import { guardSettingsOf } from '../delivery/guard-settings.ts'
import type { Provider } from '../delivery/provider.ts'
import { ProviderGuards } from '../delivery/provider-guards.ts'
import { ChannelRouter } from '../delivery/router.ts'
import { CountryRouter, routedConfig, routesDelivery } from '../delivery/routing.ts'
import type { ServiceMetrics } from '../http/service-metrics.ts'
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import type { Delivery } from '../otp/ports/index.ts'
import type { ReceiptReader } from '../otp/receipts.ts'
import { CHANNELS, type Channel } from '../otp/types.ts'

type Env = Record<string, string | undefined>

export interface DeliverySources {
  /** Replaces the configured providers (tests use a recording one). */
  replacement?: Delivery
  /** The environment the providers read their secrets from, as the last reload left it. */
  env(): Env
  clock: Clock
  logger: Logger
  metrics: ServiceMetrics
  /** The receipt URLs' base (restart-only: receipt URLs handed out must keep working). */
  publicUrl: string | undefined
}

export interface ServerDelivery {
  /** What the send service delivers through. */
  delivery: Delivery
  /** The providers a reload replaces; null when a replacement was given (it is kept). */
  switchable: SwitchDelivery | null
  /** The router of a reloaded config. */
  makeDelivery(config: Config): Delivery
  /** A router of `config`'s providers counted as the server's own (a hook's `channels`: app/hooks.ts); null when a replacement was given. */
  makeCounted(config: Config): Delivery | null
  /** Channels that only print to the log (nothing is really delivered). */
  logOnly: Channel[]
  /** Each provider's slots and circuit (docs/delivery.md#slow-providers). */
  guards: ProviderGuards
}

export function serverDelivery(config: Config, s: DeliverySources): ServerDelivery {
  const providersOf = (c: Config) => buildProviders(c, { env: s.env(), logger: s.logger, now: () => s.clock.now(), publicUrl: s.publicUrl })
  // One set of guards for the server's life: a reload gives them new settings and keeps their slots and circuits.
  const guards = new ProviderGuards(guardSettingsOf(config), () => s.clock.now(), s.logger)
  // Each `[[routing]]` table that changes providers or senders has a router of its own (docs/delivery.md#routing-by-country).
  const router = (c: Config, p: Record<Channel, Provider[]>): Delivery => {
    const tables = c.routing.flatMap((route, i) => (routesDelivery(route) ? [{ i, providers: providersOf(routedConfig(c, route)) }] : []))
    // The providers of this config show in /metrics, /readyz and the console from the start.
    guards.configure(
      guardSettingsOf(c),
      [p, ...tables.map((t) => t.providers)].flatMap((q) => CHANNELS.flatMap((ch) => q[ch].map((x) => x.name))),
    )
    const make = (q: Record<Channel, Provider[]>) => new ChannelRouter(q, c.delivery.timeout_ms, s.logger, (a) => s.metrics.attempt(a), guards)
    const base = make(p)
    return c.routing.length === 0 ? base : new CountryRouter(c.routing, base, new Map(tables.map((t) => [t.i, make(t.providers)] as const)))
  }
  const providers = providersOf(config)
  const switchable = s.replacement ? null : new SwitchDelivery(router(config, providers))
  return {
    delivery: countedDelivery(switchable ?? s.replacement!, s.metrics),
    switchable,
    makeDelivery: (c) => router(c, providersOf(c)),
    makeCounted: (c) => (s.replacement ? null : countedDelivery(router(c, providersOf(c)), s.metrics)),
    logOnly: s.replacement ? [] : logOnlyChannels(providers),
    guards,
  }
}

/** The receipt readers of the config and environment in force: rebuilt when a reload changes either object. */
export function receiptReadersInForce(s: { config(): Config; env(): Env; clock: Clock; publicUrl: string | undefined }): () => Map<string, ReceiptReader> {
  let readers: { config: Config; env: Env; map: Map<string, ReceiptReader> } | undefined
  return () => {
    const config = s.config()
    const env = s.env()
    if (readers?.config !== config || readers.env !== env) {
      readers = { config, env, map: buildReceiptReaders(config, { env, now: () => s.clock.now(), publicUrl: s.publicUrl }) }
    }
    return readers.map
  }
}

/** Counts sends that reached delivery, by the provider that took them (the HTTP layer counts the rest). */
function countedDelivery(inner: Delivery, metrics: ServiceMetrics): Delivery {
  return {
    async deliver(message) {
      try {
        const receipt = await inner.deliver(message)
        metrics.send(message.channel, receipt.provider, 'sent')
        return receipt
      } catch (err) {
        metrics.send(message.channel, 'none', 'failed')
        throw err
      }
    },
  }
}
