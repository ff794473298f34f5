/**
 * The hooks' wiring (docs/integrations.md): each hook's request limit and,
 * when its table names `channels`, its own providers, both rebuilt when a
 * reload changes what they were built from.
 */
import type { Config } from '../config/schema.ts'
import { HookDeliveries } from '../hooks/delivery.ts'
import type { HookRouteDeps } from '../http/hooks-route.ts'
import type { ServiceMetrics } from '../http/service-metrics.ts'
import type { Logger } from '../lib/logger.ts'
import { KeyLimiter } from '../otp/key-limiter.ts'
import type { Delivery } from '../otp/ports/index.ts'
import type { SendService } from '../otp/send.ts'
import type { Core } from './core.ts'
import type { ServerDelivery } from './delivery.ts'
import type { InForce } from './reload.ts'

export interface HookSources {
  core: Core
  inForce: InForce
  delivery: ServerDelivery
  metrics: ServiceMetrics
  logger: Logger
  send: SendService
}

export function hookRouteDeps(s: HookSources): HookRouteDeps {
  const { storage, hasher, clock } = s.core
  const hooksOf = () => s.inForce.config.hooks
  const limiters = new Map<string, { max: number; limiter: KeyLimiter }>()
  const limiterFor = (name: string): KeyLimiter => {
    const max = hooksOf()[name]?.requests_per_minute ?? s.inForce.config.limits.key_requests_per_minute
    let held = limiters.get(name)
    if (held?.max !== max) limiters.set(name, (held = { max, limiter: new KeyLimiter(storage, clock, max) }))
    return held.limiter
  }
  const routers = new Map<string, { channels: string; delivery: Delivery | null }>()
  const deliveryFor = (name: string): Delivery | undefined => {
    const channels = hooksOf()[name]?.channels
    if (channels === undefined) return undefined
    const stamp = JSON.stringify([channels, s.inForce.config.providers])
    let held = routers.get(name)
    if (held?.channels !== stamp) routers.set(name, (held = { channels: stamp, delivery: s.delivery.makeCounted(withChannels(s.inForce.config, channels)) }))
    return held.delivery ?? undefined
  }
  storage.onStale(() => {
    for (const { limiter } of limiters.values()) limiter.forget()
  })
  return {
    logger: s.logger,
    metrics: s.metrics,
    clock,
    hooks: new HookDeliveries({ storage, hasher, clock, send: s.send, limiterFor, deliveryFor }),
    hookNamed: (name) => {
      const hooks = hooksOf()
      if (!Object.hasOwn(hooks, name)) return undefined
      const config = hooks[name]!
      return { config, secret: config.secret_env === undefined ? undefined : s.inForce.env[config.secret_env] }
    },
    resolveLocale: (tag) => s.send.resolveLocale(tag),
  }
}

/** A configured hook as `otpd hooks list` shows it. */
export interface HookListing {
  name: string
  type: string
  account: string
  /** From `server.public_url`, else the path alone. */
  url: string
  /** Its last request that reached a delivery (its key's last use); null: none yet. */
  lastUsedAt: number | null
}

/** Each `[hooks.NAME]` of `config`, with the last use its key records. */
export async function listHooks(core: Pick<Core, 'storage'>, config: Config): Promise<HookListing[]> {
  const keys = await core.storage.read((r) => r.hookKeys.list())
  const base = config.server.public_url === undefined ? '' : config.server.public_url.replace(/\/+$/, '')
  return Object.entries(config.hooks)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, h]) => ({
      name,
      type: h.type,
      account: h.account,
      url: `${base}/hooks/${name}`,
      lastUsedAt: keys.find((k) => k.hook === name)?.lastUsedAt ?? null,
    }))
}

function withChannels(config: Config, channels: NonNullable<Config['hooks'][string]['channels']>): Config {
  return { ...config, channels: { ...config.channels, ...channels } }
}
