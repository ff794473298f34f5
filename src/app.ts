/**
 * Composition root: config -> database -> stores -> services -> HTTP. The only
 * module that chooses concrete implementations.
 */
import pkg from '../package.json' with { type: 'json' }
import { applyReload, SwitchDelivery, type LiveSettings } from './app-reload.ts'
import { fraudSettingsOf } from './app-fraud.ts'
import type { Config } from './config/schema.ts'
import { tlsFingerprint } from './config/tls.ts'
import { publicUrlBase } from './config/public-url.ts'
import { buildProviders, buildReceiptReaders, checkProviders, logOnlyChannels } from './delivery/registry.ts'
import { EventDispatcher } from './events/dispatcher.ts'
import type { PostEvent } from './events/post.ts'
import { ChannelRouter } from './delivery/router.ts'
import { createAdminApp, createHttpApp } from './http/app.ts'
import { buildOpenApi } from './http/openapi.ts'
import type { Readiness } from './http/ops-routes.ts'
import { createServiceMetrics, type ServiceMetrics } from './http/service-metrics.ts'
import { systemClock, type Clock } from './lib/clock.ts'
import { createLogger, type Logger } from './lib/logger.ts'
import { SecretBox } from './lib/secret-box.ts'
import { Hasher } from './lib/secrets.ts'
import { VerificationIds } from './lib/verification-id.ts'
import { Admin } from './otp/admin.ts'
import { Authenticator } from './otp/api-keys.ts'
import { CancelService } from './otp/cancel.ts'
import { Idempotency } from './otp/idempotency.ts'
import { FraudGuard } from './otp/fraud.ts'
import { FraudAdmin } from './otp/fraud-admin.ts'
import { KeyLimiter } from './otp/key-limiter.ts'
import type { Delivery, Storage } from './otp/ports/index.ts'
import { ReceiptService, type ReceiptReader } from './otp/receipts.ts'
import { recoverUnsettledSends } from './otp/recovery.ts'
import { SendService } from './otp/send.ts'
import { ShowService } from './otp/show.ts'
import type { Channel, Limits } from './otp/types.ts'
import { VerifyService } from './otp/verify.ts'
import { Webhooks } from './otp/webhooks.ts'
import { pgConnection } from './config/database.ts'
import { openPostgres, type PgEngine } from './store/pg/engine.ts'
import { configuredSecret } from './store/secret.ts'
import { migrationsCurrent, openDatabase, openReader, type Db } from './store/sqlite/db.ts'
import { databaseFileSizes } from './store/sqlite/health.ts'
import { startCheckpointer, type Checkpointer } from './store/sqlite/checkpointer.ts'
import { startWalSync } from './store/sqlite/wal-sync.ts'
import { loadGuardedSecret } from './store/sqlite/guards.ts'
import { EVENT_ID_PURPOSE } from './store/sqlite/event-store.ts'
import { SqliteStorage } from './store/sqlite/storage.ts'
import { sweep, type SweepResult } from './store/sqlite/sweep.ts'
import { WriteHealth } from './store/write-health.ts'

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
}

/** What both engines' storages offer beside the port. */
export interface EngineStorage extends Storage {
  /** Resolves once every write made before the call has ended. */
  settled(): Promise<void>
  close(): void
}

export interface Core {
  config: Config
  /** `database.url` set: PostgreSQL (store/pg/); else the SQLite file (store/sqlite/). */
  engine: 'sqlite' | 'postgres'
  /** The SQLite database; undefined on PostgreSQL. */
  db: Db | undefined
  /** The PostgreSQL engine; undefined on SQLite. */
  pg: PgEngine | undefined
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
  close(): void
}

/** Exit status after a failed flush (EX_SOFTWARE): systemd restarts the service, and recovery at start makes the ledger whole. */
export const FATAL_EXIT_STATUS = 70

/** What the CLI needs: the database, migrated, and the operator use cases. */
export async function openCore(config: Config, opts: CoreOptions = {}): Promise<Core> {
  const clock = opts.clock ?? systemClock
  const logger = opts.logger ?? createLogger({ level: config.logging.level, format: process.stdout.isTTY ? 'text' : 'json' })
  const writeHealth = new WriteHealth(() => clock.now())
  const env = opts.env ?? {}
  const secret = configuredSecret(config.server, env)
  if (config.database.url !== undefined) {
    // The config check refuses a URL without a secret; this holds for configs built in code too.
    if (secret === undefined)
      throw new Error(
        'database.url selects PostgreSQL, where every node must use the same server secret: set server.secret, server.secret_env or server.secret_file',
      )
    const pg = await openPostgres(pgConnection(config.database, env), secret, {
      poolSize: config.database.pool_size,
      lockTimeoutMs: config.database.busy_timeout_ms,
      onWriteResult: (err) => writeHealth.record(err),
    })
    const hasher = new Hasher(secret.bytes)
    const admin = new Admin(pg.storage, hasher, clock)
    const sealer = new SecretBox(hasher, 'webhook-secrets')
    const webhooks = new Webhooks(pg.storage, sealer, clock)
    const fraud = new FraudAdmin(pg.storage, clock)
    return {
      config,
      engine: 'postgres',
      db: undefined,
      pg,
      clock,
      logger,
      hasher,
      storage: pg.storage,
      writeHealth,
      admin,
      webhooks,
      sealer,
      fraud,
      close: () => void pg.close().catch(() => undefined),
    }
  }
  const db = openDatabase({ path: config.database.path, synchronous: config.database.synchronous, busyTimeoutMs: config.database.busy_timeout_ms })
  const hasher = new Hasher(loadGuardedSecret(db.$client, secret, config.database.path))
  const reader = openReader(db, config.database.path)
  const onFatal =
    opts.onFatal ??
    ((err: Error) => {
      logger.error(
        'the database flush failed: stopping without answering, so that nothing unsure is acknowledged; recovery at the next start settles what was in flight',
        {
          error: err.message,
        },
      )
      process.exit(FATAL_EXIT_STATUS)
    })
  const storage = new SqliteStorage(db, reader, {
    busyTimeoutMs: config.database.busy_timeout_ms,
    onFatal,
    eventIds: new VerificationIds(hasher, EVENT_ID_PURPOSE),
    onWriteResult: (err) => writeHealth.record(err),
  })
  const admin = new Admin(storage, hasher, clock)
  const sealer = new SecretBox(hasher, 'webhook-secrets')
  const webhooks = new Webhooks(storage, sealer, clock)
  const close = () => {
    storage.close()
    if (reader !== db) reader.$client.close()
    db.$client.close()
  }
  return {
    config,
    engine: 'sqlite',
    db,
    pg: undefined,
    clock,
    logger,
    hasher,
    storage,
    writeHealth,
    admin,
    webhooks,
    sealer,
    fraud: new FraudAdmin(storage, clock),
    close,
  }
}

export function limitsOf(config: Config): Limits {
  const l = config.limits
  return {
    keyRequestsPerMinute: l.key_requests_per_minute,
    recipientPerMinute: l.recipient_per_minute,
    recipientPerHour: l.recipient_per_hour,
    recipientPerDay: l.recipient_per_day,
    maxFailedAttempts: l.max_failed_attempts,
    lockoutSeconds: l.lockout_seconds,
    recipientFailuresPerDay: l.recipient_failures_per_day,
  }
}

export interface ServerOptions extends CoreOptions {
  /** Replaces the configured providers (tests use a recording one). */
  delivery?: Delivery
  /** Where `log` providers print; stdout by default. */
  logWrite?: (line: string) => void
  env?: Record<string, string | undefined>
  /**
   * WAL work on worker threads instead of inside commits (`serve` sets it):
   * checkpoints (store/sqlite/checkpointer.ts) and, with synchronous = FULL, the
   * fsync that makes a batch durable before it is answered (store/sqlite/wal-sync.ts).
   */
  backgroundCheckpoints?: boolean
  /** Replaces the event POST (tests); the real one by default. */
  postEvent?: PostEvent
}

export interface Server extends Core {
  http: ReturnType<typeof createHttpApp>
  /** The admin listener's app (health, readiness, /metrics without a token); `serve` starts it when `server.admin_listen` is set. */
  adminHttp: ReturnType<typeof createAdminApp>
  metrics: ServiceMetrics
  readiness(): Promise<Readiness>
  checkpointer: Checkpointer | undefined
  /** Like close(), after the WAL worker threads have closed their connections (serve uses it on SIGTERM). */
  shutdown(): Promise<void>
  /** Channels that only print to the log (nothing is really delivered). */
  logOnly: Channel[]
  /** One retention sweep; `maxRows` bounds each table's deletions (see store/sqlite/sweep.ts). */
  sweep(maxRows?: number): Promise<SweepResult>
  /** Refunds sends left unsettled by a process that stopped during delivery (otp/recovery.ts). */
  recover(): Promise<number>
  /** The event delivery loop (events/dispatcher.ts); `serve` starts it. */
  events: EventDispatcher
  /** Applies a checked config to the running server (SIGHUP); returns the changed settings that wait for a restart. */
  reload(next: Config, env?: Record<string, string | undefined>): string[]
}

/** How long /readyz answers from its last look: a flood of probes costs one look a second. */
export const READY_CACHE_MS = 1_000

export async function buildServer(config: Config, opts: ServerOptions = {}): Promise<Server> {
  const core = await openCore(config, opts)
  const { db, pg, clock, logger, hasher, storage, writeHealth } = core
  let env = opts.env ?? {}
  const ids = new VerificationIds(hasher)
  const limits = limitsOf(config)
  const metrics = createServiceMetrics({
    creditBalances: async () => (await storage.read((r) => r.admin.listAccounts())).map((a) => ({ account: a.name, balance: a.balance })),
    databaseFiles: () => (db ? databaseFileSizes(config.database.path) : []),
    version: pkg.version,
    startedAt: Date.now(),
    outboxDepth: () => storage.read((r) => r.webhooks.outboxDepth()),
  })
  const events = new EventDispatcher({ storage, clock, logger, sealer: core.sealer, post: opts.postEvent, onOutcome: (o) => metrics.webhookDelivery(o) })
  // Restart-only (app-reload.ts): receipt URLs handed out must keep working.
  const publicUrl = publicUrlBase(config.server.public_url)
  const providers = buildProviders(config, { env, logWrite: opts.logWrite, now: () => clock.now(), publicUrl })
  const router = (c: Config, p = buildProviders(c, { env, logWrite: opts.logWrite, now: () => clock.now(), publicUrl })): Delivery =>
    new ChannelRouter(p, c.delivery.timeout_ms, logger, (a) => metrics.attempt(a))
  const switchable = opts.delivery ? null : new SwitchDelivery(router(config, providers))
  const delivery = countedDelivery(switchable ?? opts.delivery!, metrics)
  // Read-only: a probe never writes (a flood of them once grew the WAL by
  // hundreds of MB). Writes report how they end (store/write-health.ts).
  const look = async (): Promise<Readiness> => ({
    database:
      (await problemOf(async () => {
        if (pg) return await pg.check()
        // Both connections answer: the writer (a statement of its own, so a
        // closed connection shows) and the reader.
        db!.$client.prepare('SELECT 1').get()
        await storage.read((r) => r.admin.findAccount(''))
      })) ?? writeHealth.problem(),
    migrations: await problemOf(async () => {
      if (!(pg ? await pg.migrationsCurrent() : migrationsCurrent(db!.$client))) throw new Error('the database lacks migrations this version needs')
    }),
    delivery: checkProviders(live.config, env).join('; ') || null,
  })
  let lastLook: { at: number; result: Promise<Readiness> } | undefined
  const readiness = (): Promise<Readiness> => {
    const now = clock.now()
    if (lastLook === undefined || now - lastLook.at >= READY_CACHE_MS || now < lastLook.at) lastLook = { at: now, result: look() }
    return lastLook.result
  }

  const auth = new Authenticator(storage, hasher, clock)
  core.admin.onKeyChange(() => auth.forget())
  const makeLimiter = (max: number) => new KeyLimiter(storage, clock, max)
  const limiter = makeLimiter(limits.keyRequestsPerMinute)
  const ops = { readiness, metrics, logger }
  const idempotency = new Idempotency(hasher, { retentionHours: config.idempotency.retention_hours })
  // Named, so a reload (app-reload.ts) can update what the services read on each request.
  const guard = new FraudGuard(fraudSettingsOf(config))
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
  }
  const verifyDeps = { storage, hasher, ids, clock, limits, limiter, idempotency }
  const showDeps = { storage, ids, clock, limits, limiter }
  const cancelDeps = { storage, ids, clock, limits, limiter, idempotency }
  // The receipt readers follow a reload: rebuilt when the config or environment object changes.
  let readers: { config: Config; env: typeof env; map: Map<string, ReceiptReader> } | undefined
  const receiptReaders = (): Map<string, ReceiptReader> => {
    if (readers?.config !== live.config || readers.env !== env) {
      readers = { config: live.config, env, map: buildReceiptReaders(live.config, { env, now: () => clock.now(), publicUrl }) }
    }
    return readers.map
  }
  const httpDeps = {
    ...ops,
    publicUrl,
    receiptReaders,
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
    makeDelivery: (c) => router(c),
    makeLimiter,
    holders: [sendDeps, verifyDeps, showDeps, cancelDeps, httpDeps],
    idempotency: idempotency.settings,
    send: sendDeps,
    http: httpDeps,
    fraud: guard,
  }
  // SQLite only: PostgreSQL checkpoints and flushes by itself.
  const sqliteStorage = storage instanceof SqliteStorage ? storage : undefined
  const background = db !== undefined && opts.backgroundCheckpoints && config.database.path !== ':memory:'
  const checkpointer =
    background && db
      ? startCheckpointer(db, config.database.path, config.database.busy_timeout_ms, (error) => logger.error('WAL checkpoint failed', { error }))
      : undefined
  if (checkpointer) sqliteStorage?.shareWritesWith(checkpointer.turn)
  // FULL's guarantee with the fsync on a worker thread (store/sqlite/wal-sync.ts).
  const walSync =
    background && config.database.synchronous === 'FULL'
      ? startWalSync(
          config.database.path,
          // A failed flush is fatal: the storage's onFatal logs it, once.
          () => {},
          (ms) => metrics.walFlush(ms),
        )
      : undefined
  if (walSync) {
    db!.$client.run('PRAGMA synchronous = NORMAL')
    sqliteStorage?.settleAfter(() => walSync.sync())
  }
  return {
    ...core,
    checkpointer,
    close: () => {
      void events.stop()
      void checkpointer?.stop()
      void walSync?.stop()
      core.close()
    },
    // The workers' connections close first, so the server's is the last one and
    // SQLite checkpoints the WAL into the database file and removes it.
    shutdown: async () => {
      await events.stop()
      // Writes still queued (a send's outcome is written after its answer) go first.
      await storage.settled()
      await Promise.all([checkpointer?.stop(), walSync?.stop()])
      if (pg) await pg.close()
      else core.close()
    },
    http,
    events,
    adminHttp: createAdminApp(ops),
    metrics,
    readiness,
    logOnly: opts.delivery ? [] : logOnlyChannels(providers),
    // In a write of its own: never beside a batch, and no lock wait on the event loop.
    sweep: (maxRows) =>
      pg
        ? pg.sweep(clock.now(), live.config.retention.days, maxRows, live.config.idempotency.retention_hours)
        : storage.write(async () => sweep(db!, clock.now(), live.config.retention.days, maxRows, live.config.idempotency.retention_hours)),
    recover: () => recoverUnsettledSends({ storage, clock, logger, deliveryTimeoutMs: live.config.delivery.timeout_ms }),
    reload: (next, nextEnv) => {
      if (nextEnv) env = nextEnv
      return applyReload(live, next, limitsOf(next))
    },
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

async function problemOf(check: () => Promise<unknown>): Promise<string | null> {
  try {
    await check()
    return null
  } catch (err) {
    return err instanceof Error ? err.message : String(err)
  }
}
