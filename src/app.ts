/**
 * Composition root: config -> database -> stores -> services -> HTTP. The only
 * module that chooses concrete implementations.
 */
import type { Config } from './config/schema.ts'
import { buildProviders, logOnlyChannels } from './delivery/registry.ts'
import { ChannelRouter } from './delivery/router.ts'
import { createHttpApp } from './http/app.ts'
import { systemClock, type Clock } from './lib/clock.ts'
import { createLogger, type Logger } from './lib/logger.ts'
import { Hasher } from './lib/secrets.ts'
import { Admin } from './otp/admin.ts'
import { Authenticator } from './otp/api-keys.ts'
import { KeyLimiter } from './otp/key-limiter.ts'
import type { Delivery } from './otp/ports.ts'
import { SendService } from './otp/send.ts'
import type { Channel, Limits } from './otp/types.ts'
import { VerifyService } from './otp/verify.ts'
import { SqliteAdminStore, SqliteCreditStore, SqliteKeyStore } from './store/admin-store.ts'
import { openDatabase, type Db } from './store/db.ts'
import { RecipientFailureLog, SqliteKeyHitLog } from './store/event-logs.ts'
import { startCheckpointer, type Checkpointer } from './store/checkpointer.ts'
import { startWalSync } from './store/wal-sync.ts'
import { loadSecret } from './store/secret.ts'
import { sweep } from './store/sweep.ts'
import { SqliteTransactor } from './store/transactor.ts'
import { SqliteVerificationStore } from './store/verification-store.ts'

export interface CoreOptions {
  clock?: Clock
  logger?: Logger
}

export interface Core {
  config: Config
  db: Db
  clock: Clock
  logger: Logger
  hasher: Hasher
  tx: SqliteTransactor
  credits: SqliteCreditStore
  admin: Admin
  close(): void
}

/** What the CLI needs: the database, migrated, and the operator use cases. */
export function openCore(config: Config, opts: CoreOptions = {}): Core {
  const clock = opts.clock ?? systemClock
  const logger = opts.logger ?? createLogger({ level: config.logging.level, format: process.stdout.isTTY ? 'text' : 'json' })
  const db = openDatabase({ path: config.database.path, synchronous: config.database.synchronous, busyTimeoutMs: config.database.busy_timeout_ms })
  const hasher = new Hasher(loadSecret(config.server.secret, config.database.path))
  const tx = new SqliteTransactor(db)
  const credits = new SqliteCreditStore(db)
  const admin = new Admin(tx, new SqliteAdminStore(db), credits, hasher, clock)
  return { config, db, clock, logger, hasher, tx, credits, admin, close: () => db.$client.close() }
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
   * checkpoints (store/checkpointer.ts) and, with synchronous = FULL, the
   * fsync that makes a batch durable before it is answered (store/wal-sync.ts).
   */
  backgroundCheckpoints?: boolean
}

export interface Server extends Core {
  http: ReturnType<typeof createHttpApp>
  checkpointer: Checkpointer | undefined
  /** Channels that only print to the log (nothing is really delivered). */
  logOnly: Channel[]
  /** One retention sweep; `maxRows` bounds each table's deletions (see store/sweep.ts). */
  sweep(maxRows?: number): ReturnType<typeof sweep>
}

export function buildServer(config: Config, opts: ServerOptions = {}): Server {
  const core = openCore(config, opts)
  const { db, clock, logger, hasher, tx, credits } = core
  const verifications = new SqliteVerificationStore(db)
  const limits = limitsOf(config)
  const providers = buildProviders(config, { env: opts.env ?? {}, logWrite: opts.logWrite })
  const delivery = opts.delivery ?? new ChannelRouter(providers, config.delivery.timeout_ms, logger)

  const keys = new SqliteKeyStore(db)
  const auth = new Authenticator(keys, hasher, clock)
  core.admin.onKeyChange(() => auth.forget())
  const limiter = new KeyLimiter(tx, new SqliteKeyHitLog(db, tx), keys, clock, limits.keyRequestsPerMinute)
  tx.onStale(() => limiter.forget())
  const http = createHttpApp({
    auth,
    limiter,
    send: new SendService({
      tx,
      verifications,
      credits,
      accounts: credits,
      delivery,
      hasher,
      clock,
      logger,
      limits,
      limiter,
      defaultCodeLength: config.codes.default_length,
    }),
    verify: new VerifyService({ tx, verifications, failures: new RecipientFailureLog(db), hasher, clock, limits, limiter }),
    logger,
    lockoutSeconds: limits.lockoutSeconds,
  })
  const background = opts.backgroundCheckpoints && config.database.path !== ':memory:'
  const checkpointer = background
    ? startCheckpointer(db, config.database.path, config.database.busy_timeout_ms, (error) => logger.error('WAL checkpoint failed', { error }))
    : undefined
  // FULL's guarantee with the fsync on a worker thread (store/wal-sync.ts).
  const walSync = background && config.database.synchronous === 'FULL' ? startWalSync(config.database.path, (error) => logger.error('WAL fsync failed', { error })) : undefined
  if (walSync) {
    db.$client.run('PRAGMA synchronous = NORMAL')
    tx.settleAfter(() => walSync.sync())
  }
  return {
    ...core,
    checkpointer,
    close: () => {
      checkpointer?.stop()
      walSync?.stop()
      core.close()
    },
    http,
    logOnly: opts.delivery ? [] : logOnlyChannels(providers),
    sweep: (maxRows) => sweep(db, clock.now(), config.retention.days, maxRows),
  }
}
