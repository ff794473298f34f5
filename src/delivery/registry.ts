/**
 * Turns `[channels]` and `[providers.*]` into providers per channel, and checks
 * them, reporting each problem as a sentence naming its key. A channel with
 * nothing configured uses the `log` provider.
 */
import type { Config } from '../config/schema.ts'
import { CHANNELS, type Channel } from '../otp/types.ts'
import { LogProvider } from './log-provider.ts'
import { NoopProvider } from './noop-provider.ts'
import type { Provider } from './provider.ts'

type Env = Record<string, string | undefined>
type Options = Record<string, unknown>

/** What providers may need from outside their own table. */
export interface ProviderContext {
  env: Env
  /** Where `log` providers print; stdout when absent. */
  logWrite?: (line: string) => void
}

interface ProviderType {
  /** Problems with the provider's table, each naming its key under `providers.NAME`. */
  check(name: string, opts: Options, env: Env): string[]
  create(name: string, opts: Options, ctx: ProviderContext): Provider
}

const TYPES: Record<string, ProviderType> = {
  log: {
    check: (name, opts) => unknownKeys(name, opts, ['type']),
    create: (name, _opts, ctx) => new LogProvider(name, ctx.logWrite),
  },
  noop: {
    check: (name, opts) => unknownKeys(name, opts, ['type']),
    create: (name) => new NoopProvider(name),
  },
}

function unknownKeys(name: string, opts: Options, known: string[]): string[] {
  return Object.keys(opts)
    .filter((k) => !known.includes(k))
    .map((k) => `providers.${name}.${k} is not a setting of a '${String(opts.type)}' provider`)
}

export function checkProviders(config: Config, env: Env): string[] {
  const problems: string[] = []
  for (const [name, opts] of Object.entries(config.providers)) {
    const type = TYPES[String(opts.type)]
    if (!type) {
      problems.push(
        opts.type === undefined
          ? `providers.${name}.type is missing (one of: ${Object.keys(TYPES).join(', ')})`
          : `providers.${name}.type '${String(opts.type)}' is not one of: ${Object.keys(TYPES).join(', ')}`,
      )
      continue
    }
    problems.push(...type.check(name, opts, env))
  }
  for (const channel of CHANNELS) {
    for (const name of config.channels[channel] ?? []) {
      if (!Object.hasOwn(config.providers, name)) problems.push(`channels.${channel} names provider '${name}', which is not defined`)
    }
  }
  return problems
}

/** Providers per channel, in failover order. Assumes checkProviders found nothing. */
export function buildProviders(config: Config, ctx: ProviderContext): Record<Channel, Provider[]> {
  const built = new Map<string, Provider>()
  const get = (name: string): Provider => {
    let p = built.get(name)
    if (!p) {
      const opts = config.providers[name]!
      p = TYPES[String(opts.type)]!.create(name, opts, ctx)
      built.set(name, p)
    }
    return p
  }
  const fallback = new LogProvider('log', ctx.logWrite)
  const out = {} as Record<Channel, Provider[]>
  for (const channel of CHANNELS) {
    const names = config.channels[channel]
    out[channel] = names ? names.map(get) : [fallback]
  }
  return out
}

/** Channels whose messages reach no one (only the log, or nowhere): `serve` warns about these at start. */
export function logOnlyChannels(providers: Record<Channel, Provider[]>): Channel[] {
  return CHANNELS.filter((c) => providers[c].every((p) => p.type === 'log' || p.type === 'noop'))
}
