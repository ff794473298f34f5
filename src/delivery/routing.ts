/**
 * Routing by country (docs/delivery.md#routing-by-country): `[[routing]]`
 * tables name countries (ISO codes, or `*` for every other one), the
 * workflow `channel: "auto"` means there, providers per channel in place of
 * `[channels]`, and a sender (`from`) per provider. A message goes by the
 * first table naming its destination's country, else the `*` table, else
 * by `[channels]`; an email address has no country and goes by the `*` table.
 */
import type { Config } from '../config/schema.ts'
import { destinationOf, isKnownCountry } from '../lib/phone-country.ts'
import type { Delivery } from '../otp/ports/index.ts'
import type { OutboundMessage } from '../otp/types.ts'

export type Route = Config['routing'][number]

/** The table a recipient's messages go by, with its index; undefined: `[channels]`. */
export function routeFor(routes: readonly Route[], recipient: string): { index: number; route: Route } | undefined {
  const country = recipient.includes('@') ? null : destinationOf(recipient).country
  const exact = country === null ? -1 : routes.findIndex((r) => r.countries.includes(country))
  const index = exact >= 0 ? exact : routes.findIndex((r) => r.countries.includes('*'))
  return index < 0 ? undefined : { index, route: routes[index]! }
}

/** The config a table's messages are delivered with: its channels over `[channels]`, its senders over the providers' own. */
export function routedConfig(config: Config, route: Route): Config {
  const providers = { ...config.providers }
  for (const [name, from] of Object.entries(route.from ?? {})) {
    const table = providers[name]
    if (table) providers[name] = { ...table, from }
  }
  return { ...config, providers, channels: { ...config.channels, ...route.channels } }
}

/** Whether a table changes how messages are delivered (else `[channels]` serves its countries as is). */
export function routesDelivery(route: Route): boolean {
  return Object.keys(route.channels ?? {}).length > 0 || Object.keys(route.from ?? {}).length > 0
}

/**
 * What the tables themselves get wrong: an unknown country, a country in two
 * tables, a workflow naming a channel twice or naming email (`auto` sends to
 * a phone number), a sender for a provider that is not defined. Their
 * providers' own problems are checkProviders' (on routedConfig).
 */
export function routingProblems(config: Config): string[] {
  const problems: string[] = []
  const seen = new Map<string, number>()
  for (const [i, route] of config.routing.entries()) {
    const at = `routing[${i}]`
    for (const country of route.countries) {
      if (country !== '*' && !isKnownCountry(country)) problems.push(`${at}.countries names '${country}', which is not a known ISO 3166-1 country code`)
      const earlier = seen.get(country)
      if (earlier !== undefined) problems.push(`${at}.countries names '${country}', which routing[${earlier}] names already`)
      else seen.set(country, i)
    }
    const workflow = route.workflow ?? []
    for (const [k, channel] of workflow.entries()) {
      if (workflow.indexOf(channel) !== k) problems.push(`${at}.workflow names '${channel}' twice`)
      if (channel === 'email') problems.push(`${at}.workflow names 'email': channel auto sends to a phone number`)
    }
    for (const name of Object.keys(route.from ?? {})) {
      if (!Object.hasOwn(config.providers, name)) problems.push(`${at}.from names provider '${name}', which is not defined`)
    }
  }
  return problems
}

/** Delivers each message by its recipient's table (`routed`, by table index), else by `base`. */
export class CountryRouter implements Delivery {
  constructor(
    private readonly routes: readonly Route[],
    private readonly base: Delivery,
    private readonly routed: ReadonlyMap<number, Delivery>,
  ) {}

  deliver(message: OutboundMessage): Promise<{ provider: string; ref?: string; language?: string }> {
    const found = routeFor(this.routes, message.recipient)
    return ((found && this.routed.get(found.index)) ?? this.base).deliver(message)
  }
}
