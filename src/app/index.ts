/**
 * The composition root, and the one module the CLI and main.ts import:
 * config -> engine -> services -> HTTP, console, delivery. Only this folder
 * chooses concrete implementations, each built once; its parts are named by
 * what they wire (core, services, delivery, console, operations, reload,
 * catalogue, fraud, load-config, openapi).
 */
import { VERSION } from '../lib/version.ts'
import { publicUrlBase } from '../config/public-url.ts'
import type { Config } from '../config/schema.ts'
import type { ConsoleReadDeps } from '../console/read-routes.ts'
import type { ProviderCircuit } from '../console/system.ts'
import type { CircuitState } from '../delivery/provider-guard.ts'
import type { ProviderGuards } from '../delivery/provider-guards.ts'
import { checkProviders } from '../delivery/registry.ts'
import { EventDispatcher, type EventSettings } from '../events/dispatcher.ts'
import { QueuedCount } from '../events/queued.ts'
import type { PostEvent } from '../events/post.ts'
import { parseListen } from '../config/listen.ts'
import { adminHostNames } from '../http/admin-hosts.ts'
import { createAdminApp, createHttpApp } from '../http/app.ts'
import type { Readiness } from '../http/ops-routes.ts'
import type { ServiceMetrics } from '../http/service-metrics.ts'
import type { Delivery } from '../otp/ports/index.ts'
import { recoverUnsettledSends } from '../otp/recovery.ts'
import type { Rollup } from '../otp/rollup.ts'
import type { Channel } from '../otp/types.ts'
import type { SweepResult } from '../store/engine.ts'
import { type ServerConsole, serverConsole, startRollup } from './console.ts'
import { type Core, type CoreOptions, openCore } from './core.ts'
import { serverDelivery } from './delivery.ts'
import { buildOpenApi } from './openapi.ts'
import { cachedReadiness, serviceMetricsOf } from './operations.ts'
import { applyReload, type InForce, limitsOf } from './reload.ts'
import { type RequestServices, requestServices } from './services.ts'

export { buildCatalogue, checkTexts, messageSettingsOf, operatorTemplates } from './catalogue.ts'
// `otpd accounts list` shows an account as the console does.
export { accountView } from '../console/views.ts'
export { type Core, type CoreOptions, FATAL_EXIT_STATUS, openCore } from './core.ts'
export { ConfigError, type LoadedConfig, loadConfig, missingVariables, resolveConfig } from './load-config.ts'
export { READY_CACHE_MS } from './operations.ts'
export { type HookListing, listHooks } from './hooks.ts'
export { changedSettings, changedVariables } from './reload.ts'

export interface ServerOptions extends CoreOptions {
  /** Replaces the configured providers (tests use a recording one). */
  delivery?: Delivery
  /** Starts the engine's background work (`serve` sets it): on SQLite, the WAL's checkpoints and flushes on worker threads (store/sqlite/engine.ts). */
  background?: boolean
  /** Replaces the event POST (tests); the real one by default. */
  postEvent?: PostEvent
}

export interface Server extends Core {
  http: ReturnType<typeof createHttpApp>
  /** The admin listener's app (health, readiness, /metrics without a token, the console); `serve` starts it when `server.admin_listen` is set. */
  adminHttp: ReturnType<typeof createAdminApp>
  /** Whether the admin listener serves the console (`server.admin_listen` set and `console.enabled`: docs/console.md#enabling-the-console). */
  consoleOn: boolean
  metrics: ServiceMetrics
  readiness(): Promise<Readiness>
  /** Like close(), after the queued writes and the engine's background work have ended (serve uses it on SIGTERM). */
  shutdown(): Promise<void>
  /** Channels that only print to the log (nothing is really delivered). */
  logOnly: Channel[]
  /** One retention sweep; `maxRows` bounds each table's deletions (store/engine.ts). */
  sweep(maxRows?: number): Promise<SweepResult>
  /** Refunds sends left unsettled by a process that stopped during delivery (otp/recovery.ts). */
  recover(): Promise<number>
  /** Starts every workflow step whose `channel_timeout` has passed (otp/fallback.ts); returns how many started. */
  advanceDue(): Promise<number>
  /** The event delivery loop (events/dispatcher.ts); `serve` starts it. */
  events: EventDispatcher
  /** Applies a checked config to the running server (SIGHUP); returns the changed settings that wait for a restart. */
  reload(next: Config, env?: Record<string, string | undefined>): string[]
  /** What the console's read endpoints need (console/read-routes.ts consoleReadRoutes). */
  consoleRead: ConsoleReadDeps
  /** The console's rollups (otp/rollup.ts); with `background`, brought up to date every ROLLUP_INTERVAL_MS. */
  rollup: Rollup
}

export async function buildServer(config: Config, opts: ServerOptions = {}): Promise<Server> {
  const core = await openCore(config, opts)
  const inForce: InForce = { config, env: opts.env ?? {} }
  const { engine, clock, logger } = core
  const metrics = serviceMetricsOf(engine)
  const queued = new QueuedCount({ storage: core.storage, clock, logger })
  const events = new EventDispatcher({
    storage: core.storage,
    clock,
    logger,
    sealer: core.sealer,
    post: opts.postEvent,
    onOutcome: (o) => metrics.webhookDelivery(o),
    settings: () => eventSettingsOf(inForce.config),
    queued,
  })
  // Restart-only (reload.ts): receipt URLs handed out must keep working.
  const publicUrl = publicUrlBase(config.server.public_url)
  const delivery = serverDelivery(config, { replacement: opts.delivery, env: () => inForce.env, clock, logger, metrics, publicUrl })
  metrics.watchProviders(() => delivery.guards.views())
  const problems = () => checkProviders(inForce.config, inForce.env).join('; ') || null
  const readiness = cachedReadiness({ engine, writeHealth: core.writeHealth, clock, delivery: problems })
  const outboxFull = () => queued.value >= inForce.config.events.max_queued
  const services = requestServices({ core, inForce, delivery, metrics, readiness, publicUrl, openapi: buildOpenApi(VERSION), outboxFull })
  const circuits = () =>
    delivery.guards.views().map((v) => ({ provider: v.provider, circuit: v.circuit, in_flight: v.inFlight, waiting: v.waiting, max_in_flight: v.maxInFlight }))
  const admin = consoleOf(core, services, { inForce, readiness, replacedDelivery: opts.delivery !== undefined, circuits })
  if (opts.background) engine.startBackground({ logger, onFlush: (ms) => metrics.walFlush(ms) })
  // The rollups serve the console alone: with it off they cost nothing (docs/console.md#performance).
  // Its reads on a thread of their own where the engine has one (store/engine.ts startRollupPlanner).
  const stopRollup = opts.background && admin.on ? startRollup(admin.rollup, logger, engine.startRollupPlanner()) : async () => {}
  const stop = async () => {
    await events.stop()
    await stopRollup()
  }
  return {
    ...core,
    close: () => {
      void events.stop()
      void stopRollup()
      core.close()
    },
    shutdown: () => shutDown(core, stop),
    http: createHttpApp(services.http),
    events,
    adminHttp: createAdminApp(
      { readiness, metrics, logger, providerCircuits: () => circuitsOf(delivery.guards), allowedHosts: adminHostsOf(config) },
      admin.plugin,
    ),
    consoleOn: admin.on,
    metrics,
    readiness,
    logOnly: delivery.logOnly,
    sweep: (maxRows) => engine.sweep(clock.now(), inForce.config.retention.days, maxRows, inForce.config.idempotency.retention_hours),
    recover: () => recoverUnsettledSends({ storage: core.storage, clock, logger, deliveryTimeoutMs: inForce.config.delivery.timeout_ms }),
    advanceDue: () => services.http.send.fallback.advanceDue(),
    consoleRead: admin.read,
    rollup: admin.rollup,
    reload: (next, nextEnv) => {
      if (nextEnv) inForce.env = nextEnv
      return applyReload(services.live, next, limitsOf(next))
    },
  }
}

/** `[events]` (docs/configuration.md#events), read at each pass. */
function eventSettingsOf(config: Config): EventSettings {
  const e = config.events
  return { maxInFlight: e.max_in_flight, endpointMaxInFlight: e.endpoint_max_in_flight, maxQueued: e.max_queued }
}

/** Each provider's circuit by name, for the admin listener's /readyz and the console. */
function circuitsOf(guards: ProviderGuards): Record<string, CircuitState> {
  return Object.fromEntries(guards.views().map((v) => [v.provider, v.circuit]))
}

/** The console, reading the fraud guard's settings as a reload leaves them. */
function consoleOf(
  core: Core,
  services: RequestServices,
  s: { inForce: InForce; readiness(): Promise<Readiness>; replacedDelivery: boolean; circuits(): ProviderCircuit[] },
): ServerConsole {
  const { guard, ids } = services
  const fraudSettings = () => guard.settings
  const prefixKey = (accountId: number, prefix: string) => guard.prefixKey(accountId, { country: '', prefix })
  return serverConsole({ ...s, version: VERSION, core, ids, fraudSettings, prefixKey })
}

/** After the queued writes and the engine's background work have ended (serve uses it on SIGTERM). */
async function shutDown(core: Core, stop: () => Promise<void>): Promise<void> {
  await stop()
  // Writes still queued (a send's outcome is written after its answer) go first.
  await core.storage.settled()
  // The background work lets go of the database before the server does
  // (SQLite: the server's connection is the last, so it checkpoints the WAL and removes it).
  await core.engine.stopBackground()
  await core.engine.close()
}

/** The names the admin listener answers to (http/admin-hosts.ts): restart to change them, as admin_listen. */
function adminHostsOf(config: Config): Set<string> {
  const listen = config.server.admin_listen
  return adminHostNames(listen === undefined ? 'localhost' : parseListen(listen).hostname, config.server.admin_allowed_hosts)
}
