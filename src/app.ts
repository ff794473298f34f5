/**
 * Composition root: config -> engine -> services -> HTTP. The only module
 * that chooses concrete implementations, each built once; the engine comes
 * from `[database]` (store/open-engine.ts) and is used through its seam
 * (store/engine.ts) only. Beside it: app-ops.ts (readiness, metrics),
 * app-delivery.ts, app-reload.ts (SIGHUP), app-fraud.ts, app-config.ts.
 */
import pkg from '../package.json' with { type: 'json' }
import { applyReload, limitsOf, type LiveSettings } from './app-reload.ts'
import { consoleReadsOf, startRollup } from './app-console.ts'
import { receiptReadersInForce, serverDelivery } from './app-delivery.ts'
import { fraudSettingsOf } from './app-fraud.ts'
import { buildCatalogue } from './app-messages.ts'
import { cachedReadiness, serviceMetricsOf } from './app-ops.ts'
import type { Config } from './config/schema.ts'
import { tlsFingerprint } from './config/tls.ts'
import type { ConsoleReadDeps } from './console/read-routes.ts'
import { publicUrlBase } from './config/public-url.ts'
import { checkProviders } from './delivery/registry.ts'
import { consolePlugin } from './console/plugin.ts'
import { consoleReadRoutes } from './console/read-routes.ts'
import { pageReads } from './console/ui/reads.ts'
import { consolePages } from './console/ui/routes.tsx'
import { EventDispatcher } from './events/dispatcher.ts'
import type { PostEvent } from './events/post.ts'
import { createAdminApp, createHttpApp } from './http/app.ts'
import { buildOpenApi } from './http/openapi.ts'
import type { Readiness } from './http/ops-routes.ts'
import type { ServiceMetrics } from './http/service-metrics.ts'
import { systemClock, type Clock } from './lib/clock.ts'
import { createLogger, type Logger } from './lib/logger.ts'
import { SecretBox } from './lib/secret-box.ts'
import type { Hasher } from './lib/secrets.ts'
import { VerificationIds } from './lib/verification-id.ts'
import { Admin } from './otp/admin.ts'
import type { Actor } from './otp/audit.ts'
import { Authenticator } from './otp/api-keys.ts'
import { CancelService } from './otp/cancel.ts'
import { Idempotency } from './otp/idempotency.ts'
import { FraudGuard } from './otp/fraud.ts'
import { FraudAdmin } from './otp/fraud-admin.ts'
import { KeyLimiter } from './otp/key-limiter.ts'
import { Operators } from './otp/operators.ts'
import type { Delivery } from './otp/ports/index.ts'
import { ReceiptService } from './otp/receipts.ts'
import { recoverUnsettledSends } from './otp/recovery.ts'
import type { Rollup } from './otp/rollup.ts'
import { SendService } from './otp/send.ts'
import { ShowService } from './otp/show.ts'
import type { Channel, SmsInfo } from './otp/types.ts'
import { VerifyService } from './otp/verify.ts'
import { Webhooks } from './otp/webhooks.ts'
import type { Engine, EngineStorage, SweepResult } from './store/engine.ts'
import { openEngine } from './store/open-engine.ts'
import { WriteHealth } from './store/write-health.ts'

export { READY_CACHE_MS } from './app-ops.ts'

export interface CoreOptions {
  clock?: Clock
  logger?: Logger
  /**
   * A failed flush: what is on disk is unknown, so the process stops before
   * answering (store/sqlite/storage.ts). By default it logs and exits with status 70;
   * tests replace it.
   */
  onFatal?: (err: Error) => void
  /** Where `server.secret_env` and `database.password_env` are read (the loaded config's environment). */
  env?: Record<string, string | undefined>
  /** Who acts through the operator use cases: each change is written to the audit log as theirs (the CLI sets it; otp/audit.ts). */
  actor?: Actor
  /** Said when the open created a new, empty SQLite file (its absolute path); by default a warning in the log. */
  onDatabaseCreated?: (path: string) => void
}

export interface Core {
  config: Config
  /** The database, behind the seam (store/engine.ts): `database.url` set selects PostgreSQL, else the SQLite file. */
  engine: Engine
  clock: Clock
  logger: Logger
  hasher: Hasher
  storage: EngineStorage
  writeHealth: WriteHealth
  admin: Admin
  /** Webhook endpoints and the event log (`otpd webhooks`, `otpd events`). */
  webhooks: Webhooks
  /** Seals webhook secrets for the database (lib/secret-box.ts). */
  sealer: SecretBox
  /** The fraud guard's operator use cases (`otpd fraud`, `otpd accounts set --countries`...). */
  fraud: FraudAdmin
  /** Console operators and their sessions (`otpd operators`, the console's sign-in). */
  operators: Operators
  /** Closes the database without waiting (`engine.close()` resolves once it is closed). */
  close(): void
}

/** Exit status after a failed flush (EX_SOFTWARE): systemd restarts the service, and recovery at start makes the ledger whole. */
export const FATAL_EXIT_STATUS = 70

/** What the CLI needs: the database, migrated, and the operator use cases. */
export async function openCore(config: Config, opts: CoreOptions = {}): Promise<Core> {
  const clock = opts.clock ?? systemClock
  const logger = opts.logger ?? createLogger({ level: config.logging.level, format: process.stdout.isTTY ? 'text' : 'json' })
  const writeHealth = new WriteHealth(() => clock.now())
  const onFatal =
    opts.onFatal ??
    ((err: Error) => {
      logger.error(
        'the database flush failed: stopping without answering, so that nothing unsure is acknowledged; recovery at the next start settles what was in flight',
        { error: err.message },
      )
      process.exit(FATAL_EXIT_STATUS)
    })
  // A new, empty database where one was expected (another directory, another config) is how keys come to be refused: said, never silent.
  const onCreate =
    opts.onDatabaseCreated ??
    ((path: string) => logger.warn('created a new, empty database: if one was expected, check database.path and the config file read', { database: path }))
  const engine = await openEngine(config, { env: opts.env, onFatal, onWriteResult: (err) => writeHealth.record(err), onCreate })
  const { storage, hasher } = engine
  const sealer = new SecretBox(hasher, 'webhook-secrets')
  return {
    config,
    engine,
    clock,
    logger,
    hasher,
    storage,
    writeHealth,
    admin: new Admin(storage, hasher, clock, opts.actor),
    webhooks: new Webhooks(storage, sealer, clock, opts.actor),
    sealer,
    fraud: new FraudAdmin(storage, clock, opts.actor),
    operators: new Operators(storage, hasher, clock, opts.actor),
    close: () => void engine.close().catch(() => undefined),
  }
}

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
  const { engine, clock, logger, hasher, storage } = core
  let env = opts.env ?? {}
  const ids = new VerificationIds(hasher)
  const limits = limitsOf(config)
  const metrics = serviceMetricsOf(engine)
  const events = new EventDispatcher({ storage, clock, logger, sealer: core.sealer, post: opts.postEvent, onOutcome: (o) => metrics.webhookDelivery(o) })
  // Restart-only (app-reload.ts): receipt URLs handed out must keep working.
  const publicUrl = publicUrlBase(config.server.public_url)
  const sources = { replacement: opts.delivery, env: () => env, clock, logger, metrics, publicUrl }
  const { delivery, switchable, makeDelivery, logOnly } = serverDelivery(config, sources)
  const readiness = cachedReadiness({ engine, writeHealth: core.writeHealth, clock, delivery: () => checkProviders(live.config, env).join('; ') || null })

  const auth = new Authenticator(storage, hasher, clock)
  core.admin.onKeyChange(() => auth.forget())
  const makeLimiter = (max: number) => new KeyLimiter(storage, clock, max)
  const limiter = makeLimiter(limits.keyRequestsPerMinute)
  const ops = { readiness, metrics, logger }
  const idempotency = new Idempotency(hasher, { retentionHours: config.idempotency.retention_hours })
  // Named, so a reload (app-reload.ts) can update what the services read on each request.
  const guard = new FraudGuard(fraudSettingsOf(config), hasher)
  const sendDeps = {
    storage,
    delivery,
    hasher,
    ids,
    clock,
    logger,
    limits,
    limiter,
    defaultCodeLength: config.codes.default_length,
    idempotency,
    guard,
    onFraudDecision: (x: { rule: string; country: string | null }, enforced: boolean) => metrics.fraudRefusal(x.rule, x.country, enforced),
    messages: buildCatalogue(config),
    onSmsSent: (country: string, sms: SmsInfo) => metrics.smsSent(country, sms.encoding, sms.segments),
  }
  const verifyDeps = { storage, hasher, ids, clock, limits, limiter, idempotency }
  const showDeps = { storage, ids, clock, limits, limiter }
  const cancelDeps = { storage, ids, clock, limits, limiter, idempotency }
  const httpDeps = {
    ...ops,
    publicUrl,
    receiptReaders: receiptReadersInForce({ config: () => live.config, env: () => env, clock, publicUrl }),
    receipts: new ReceiptService({ storage, ids, clock }),
    auth,
    limiter,
    send: new SendService(sendDeps),
    verify: new VerifyService(verifyDeps),
    show: new ShowService(showDeps),
    cancel: new CancelService(cancelDeps),
    lockoutSeconds: limits.lockoutSeconds,
    openapi: buildOpenApi(pkg.version),
    metricsToken: config.server.metrics_token,
  }
  const http = createHttpApp(httpDeps)
  storage.onStale(() => httpDeps.limiter.forget())
  const live: LiveSettings = {
    config,
    tls: tlsFingerprint(config.server.tls),
    limits,
    delivery: switchable,
    makeDelivery,
    makeLimiter,
    makeCatalogue: buildCatalogue,
    holders: [sendDeps, verifyDeps, showDeps, cancelDeps, httpDeps],
    idempotency: idempotency.settings,
    send: sendDeps,
    http: httpDeps,
    fraud: guard,
  }
  const consoleReads = consoleReadsOf({
    version: pkg.version,
    engine,
    clock,
    logger,
    hasher,
    ids,
    config: () => live.config,
    env: () => env,
    readiness,
    fraudSettings: () => guard.settings,
    prefixKey: (accountId, prefix) => guard.prefixKey(accountId, { country: '', prefix }),
    replacedDelivery: opts.delivery !== undefined,
  })
  // The console is served by the admin listener alone: never on the API's listener (docs/console.md#enabling-the-console).
  const consoleOn = config.server.admin_listen !== undefined && config.console.enabled
  const consoleDeps = {
    operators: core.operators,
    admin: core.admin,
    fraud: core.fraud,
    webhooks: core.webhooks,
    storage,
    logger,
    trustProxy: config.console.trust_proxy,
    config: () => live.config,
  }
  // Behind the console's session guard: the JSON reads, and the pages that read through the same functions.
  const consoleRoutes = [
    consoleReadRoutes(consoleReads.deps),
    consolePages({ ...consoleDeps, reads: pageReads(consoleReads.deps, storage), now: () => clock.now() }),
  ]
  if (opts.background) engine.startBackground({ logger, onFlush: (ms) => metrics.walFlush(ms) })
  // The rollups serve the console alone: with it off they cost nothing (docs/console.md#performance).
  // Its reads on a thread of their own where the engine has one (store/engine.ts startRollupPlanner).
  const stopRollup = opts.background && consoleOn ? startRollup(consoleReads.rollup, logger, engine.startRollupPlanner()) : async () => {}
  return {
    ...core,
    close: () => {
      void events.stop()
      void stopRollup()
      core.close()
    },
    shutdown: async () => {
      await events.stop()
      await stopRollup()
      // Writes still queued (a send's outcome is written after its answer) go first.
      await storage.settled()
      // The background work lets go of the database before the server does
      // (SQLite: the server's connection is the last, so it checkpoints the WAL and removes it).
      await engine.stopBackground()
      await engine.close()
    },
    http,
    events,
    adminHttp: createAdminApp(ops, consoleOn ? consolePlugin(consoleDeps, { guarded: consoleRoutes }) : undefined),
    consoleOn,
    metrics,
    readiness,
    logOnly,
    sweep: (maxRows) => engine.sweep(clock.now(), live.config.retention.days, maxRows, live.config.idempotency.retention_hours),
    recover: () => recoverUnsettledSends({ storage, clock, logger, deliveryTimeoutMs: live.config.delivery.timeout_ms }),
    consoleRead: consoleReads.deps,
    rollup: consoleReads.rollup,
    reload: (next, nextEnv) => {
      if (nextEnv) env = nextEnv
      return applyReload(live, next, limitsOf(next))
    },
  }
}
