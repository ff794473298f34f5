/**
 * The core every command opens: the config's engine (store/open-engine.ts),
 * used through its seam (store/engine.ts) only, and the operator use cases
 * built on it. The CLI's commands stop here; the server builds on it (index.ts).
 */
import type { Config } from '../config/schema.ts'
import { systemClock, type Clock } from '../lib/clock.ts'
import { createLogger, type Logger } from '../lib/logger.ts'
import { SecretBox } from '../lib/secret-box.ts'
import type { Hasher } from '../lib/secrets.ts'
import { Admin } from '../otp/admin.ts'
import type { Actor } from '../otp/audit.ts'
import { FraudAdmin } from '../otp/fraud-admin.ts'
import { Operators } from '../otp/operators.ts'
import { Webhooks } from '../otp/webhooks.ts'
import type { Engine, EngineStorage } from '../store/engine.ts'
import { openEngine } from '../store/open-engine.ts'
import { WriteHealth } from '../store/write-health.ts'

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
  /** PostgreSQL: refuse, in these words, a database with no otpd tables instead of migrating it (the CLI without --init). */
  refuseEmptyDatabase?: (display: string) => string
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
  const engine = await openEngine(config, {
    env: opts.env,
    onFatal,
    onWriteResult: (err) => writeHealth.record(err),
    onCreate,
    refuseEmpty: opts.refuseEmptyDatabase,
  })
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
