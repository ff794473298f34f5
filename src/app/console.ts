/**
 * The console, composed (index.ts calls it): its plugin on the admin
 * listener, the rollup (otp/rollup.ts) and its loop, and the deps of the
 * read endpoints (console/read-routes.ts consoleReadRoutes).
 */
import type { Config } from '../config/schema.ts'
import { consolePlugin } from '../console/plugin.ts'
import { type ConsoleReadDeps, consoleReadRoutes } from '../console/read-routes.ts'
import { searchRoutes } from '../console/search-routes.ts'
import { pageReads } from '../console/ui/reads.ts'
import { consolePages } from '../console/ui/routes.tsx'
import type { ProviderCircuit } from '../console/system.ts'
import { buildProviders } from '../delivery/registry.ts'
import type { Readiness } from '../http/ops-routes.ts'
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import type { Hasher } from '../lib/secrets.ts'
import type { VerificationIds } from '../lib/verification-id.ts'
import { ConsoleFraud } from '../otp/console-fraud.ts'
import { ConsoleSearch } from '../otp/console-search.ts'
import { ConsoleStats } from '../otp/console-stats.ts'
import { ConsoleWorkflows } from '../otp/console-workflows.ts'
import type { FraudSettings } from '../otp/fraud.ts'
import { Rollup } from '../otp/rollup.ts'
import { CHANNELS, type Channel } from '../otp/types.ts'
import type { Engine, OffThreadPlanner } from '../store/engine.ts'
import type { Core } from './core.ts'
import type { InForce } from './reload.ts'

/** How often `serve` brings the rollups up to date: the console's figures are at most this much behind (plus one run). */
export const ROLLUP_INTERVAL_MS = 10_000

export interface ConsoleReadSources {
  version: string
  engine: Engine
  clock: Clock
  logger: Logger
  hasher: Hasher
  ids: VerificationIds
  config(): Config
  env(): Record<string, string | undefined>
  readiness(): Promise<Readiness>
  fraudSettings(): FraudSettings
  prefixKey(accountId: number, prefix: string): string
  /** Deliveries go to a replacement (tests): no configured provider order to tell a failover by. */
  replacedDelivery: boolean
  /** Each provider's circuit and slots on this node. */
  circuits(): ProviderCircuit[]
}

export function consoleReadsOf(s: ConsoleReadSources): { deps: ConsoleReadDeps; rollup: Rollup } {
  const { storage } = s.engine
  let built: { config: Config; providers: Record<Channel, { name: string; type: string }[]> } | undefined
  const providers = () => {
    const config = s.config()
    if (built?.config !== config) {
      let list: Record<Channel, { name: string; type: string }[]>
      try {
        const p = buildProviders(config, { env: s.env(), now: () => s.clock.now(), logger: s.logger })
        list = Object.fromEntries(CHANNELS.map((c) => [c, p[c].map((x) => ({ name: x.name, type: x.type }))])) as typeof list
      } catch {
        // A provider that cannot be built (its secret missing from this environment): the names the config gives.
        list = Object.fromEntries(
          CHANNELS.map((c) => [c, (config.channels[c] ?? []).map((name) => ({ name, type: config.providers[name]?.type ?? 'unknown' }))]),
        ) as typeof list
      }
      built = { config, providers: list }
    }
    return built.providers
  }
  const order = () => Object.fromEntries(CHANNELS.map((c) => [c, s.replacedDelivery ? [] : providers()[c].map((p) => p.name)])) as Record<Channel, string[]>
  const seqOf = (id: string) => s.ids.seqOf(id)
  const domain = { storage, clock: s.clock, providers: order, fraudSettings: s.fraudSettings, prefixKey: s.prefixKey }
  return {
    deps: {
      stats: new ConsoleStats(domain),
      fraud: new ConsoleFraud(domain),
      // Its aggregate on a thread of its own where the engine has one (store/engine.ts consoleReads).
      workflows: new ConsoleWorkflows({ storage, clock: s.clock, steps: s.engine.consoleReads()?.workflowSteps }),
      search: new ConsoleSearch({ storage, clock: s.clock, hasher: s.hasher, seqOf }),
      system: { version: s.version, engine: s.engine, readiness: s.readiness, config: s.config, providers, circuits: s.circuits },
      logger: s.logger,
    },
    rollup: new Rollup({ storage, clock: s.clock, seqOf, retentionDays: () => s.config().retention.days, lateRows: s.engine.lateRows }),
  }
}

export interface ConsoleSources {
  version: string
  core: Core
  inForce: InForce
  readiness(): Promise<Readiness>
  ids: VerificationIds
  fraudSettings(): FraudSettings
  prefixKey(accountId: number, prefix: string): string
  replacedDelivery: boolean
  circuits(): ProviderCircuit[]
}

export interface ServerConsole {
  /** Whether the admin listener serves the console (`server.admin_listen` set and `console.enabled`: docs/console.md#enabling-the-console). */
  on: boolean
  /** The plugin the admin listener mounts; undefined with the console off. */
  plugin: ReturnType<typeof consolePlugin> | undefined
  read: ConsoleReadDeps
  rollup: Rollup
}

export function serverConsole(s: ConsoleSources): ServerConsole {
  const { core, inForce } = s
  const { config } = inForce
  const { engine, clock, logger, hasher, storage } = core
  const reads = consoleReadsOf({ ...s, engine, clock, logger, hasher, config: () => inForce.config, env: () => inForce.env })
  // The console is served by the admin listener alone: never on the API's listener (docs/console.md#enabling-the-console).
  const on = config.server.admin_listen !== undefined && config.console.enabled
  const { operators, admin, fraud, webhooks } = core
  const deps = { operators, admin, fraud, webhooks, storage, logger, trustProxy: config.console.trust_proxy, config: () => inForce.config }
  // Behind the console's session gate: the JSON reads, and the pages that read through the same functions.
  const signedIn = [
    consoleReadRoutes(reads.deps),
    searchRoutes({ ...deps, search: reads.deps.search }),
    consolePages({ ...deps, reads: pageReads(reads.deps, storage), now: () => clock.now() }),
  ]
  return { on, plugin: on ? consolePlugin(deps, { signedIn }) : undefined, read: reads.deps, rollup: reads.rollup }
}

/**
 * A run of the rollup takes at most this share of one core: after a run of
 * `t` ms the next waits at least `t / share - t` (the figures then lag more
 * under a heavy load, and the requests keep the machine: docs/console.md#performance).
 */
export const ROLLUP_CPU_SHARE = 0.1

/**
 * Runs the rollup every `intervalMs` (or later: ROLLUP_CPU_SHARE) until
 * stopped; a failed run is logged, and the next one tries again. With a
 * `planner` (store/engine.ts startRollupPlanner) its reads run on that thread.
 */
export function startRollup(rollup: Rollup, logger: Logger, planner: OffThreadPlanner | null = null, intervalMs = ROLLUP_INTERVAL_MS): () => Promise<void> {
  let stopped = false
  let running: Promise<unknown> = Promise.resolve()
  let timer: ReturnType<typeof setTimeout> | undefined
  rollup.planWith(planner?.plan ?? null)
  const tick = () => {
    const started = performance.now()
    running = rollup
      .catchUp()
      .catch((err: unknown) => logger.warn('console rollup failed; it runs again', { error: err instanceof Error ? err.message : String(err) }))
      .finally(() => {
        const took = performance.now() - started
        if (!stopped) timer = setTimeout(tick, Math.max(intervalMs, took / ROLLUP_CPU_SHARE - took))
      })
  }
  timer = setTimeout(tick, 0)
  return async () => {
    stopped = true
    clearTimeout(timer)
    await running
    rollup.planWith(null)
    await planner?.stop()
  }
}
