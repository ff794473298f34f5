/**
 * What an engine is: the one seam between the composition root (app/), the CLI and a
 * database. An engine is opened from `[database]` (store/open-engine.ts: `url`
 * selects store/pg/engine.ts, else store/sqlite/engine.ts) with its start checks
 * done: schema migrated, server secret checked. Above this seam nothing
 * branches on the engine or holds a driver handle. A leaf, importing types
 * only, so no import circle forms through it.
 */
import type { RollupPlanner } from '../otp/rollup.ts'
import type { Logger } from '../lib/logger.ts'
import type { Hasher } from '../lib/secrets.ts'
import type { StatsReads, Storage } from '../otp/ports/index.ts'

/** What both engines' storages offer beside the port. */
export interface EngineStorage extends Storage {
  /** Resolves once every write made before the call has ended. */
  settled(): Promise<void>
  /** Later and queued writes are refused; the engine closes the connections. */
  close(): void
}

/** Rows one retention sweep deleted, per table. */
export interface SweepResult {
  verifications: number
  legacyIds: number
  /** Steps of workflow sends (docs/api.md#workflows) whose verification is gone. */
  steps: number
  keyHits: number
  recipientFailures: number
  /** Events (with their deliveries) older than the retention, none still pending. */
  events: number
  idempotencyKeys: number
  /** Fraud guard sends older than 24 h, the longest window of its rules and of `otpd fraud status`. */
  fraudSends: number
}

/** Whether a bounded sweep stopped at its bound somewhere (there may be more to delete). */
export function sweptToBound(r: SweepResult, maxRows: number): boolean {
  return (
    r.verifications >= maxRows ||
    r.keyHits >= maxRows ||
    r.recipientFailures >= maxRows ||
    r.events >= maxRows ||
    r.idempotencyKeys >= maxRows ||
    r.fraudSends >= maxRows
  )
}

/** A file of the database and its size, for /metrics. */
export interface DatabaseFile {
  file: 'database' | 'wal'
  bytes: number
}

/** What the background work reports to the server. */
export interface BackgroundHooks {
  /** Where a failed background step is logged (the work goes on). */
  logger: Logger
  /** How long each flush that makes commits durable took (ms): the `otpd_wal_flush_seconds` metric. */
  onFlush(ms: number): void
}

export interface BackupResult {
  /** Absolute path of the backup. */
  file: string
  bytes: number
}

/** Plans of the console rollup made on another thread (Engine.startRollupPlanner). */
export interface OffThreadPlanner {
  plan: RollupPlanner
  /** Ends the thread; plans still waiting fail. */
  stop(): Promise<void>
}

/** The console's aggregate reads made on another thread (Engine.consoleReads). */
export interface OffThreadReads {
  workflowSteps: StatsReads['workflowSteps']
  /** Ends the thread (its connection closed); reads still waiting fail, and a later read starts another. */
  stop(): Promise<void>
}

export interface Engine {
  /** For display only: nothing may branch on it. */
  readonly name: 'sqlite' | 'postgres'
  /**
   * Whether a row can commit after another with a higher number (verifications,
   * events, the ledger): PostgreSQL draws numbers from sequences; SQLite's one
   * writer commits them in the order drawn.
   */
  readonly lateRows: boolean
  /** Where the data is, for logs and messages: the file path, or the URL without its password. */
  readonly display: string
  readonly storage: EngineStorage
  /** Keyed by the server secret, which the start checks found to be the one the database was made with. */
  readonly hasher: Hasher
  /** Throws while the database cannot answer (for /readyz); it only reads. */
  check(): Promise<void>
  /** Whether the database has every migration this version needs (for /readyz; they are applied at open). */
  migrationsCurrent(): Promise<boolean>
  /**
   * One retention sweep: verifications `retentionDays` after they expire,
   * window rows once older than their window, Idempotency-Key records after
   * `idempotencyRetentionHours`; `maxRows` bounds each table's deletions (-1: no bound).
   */
  sweep(now: number, retentionDays: number, maxRows?: number, idempotencyRetentionHours?: number): Promise<SweepResult>
  /** The database's files and their sizes (none when the engine has no local files). */
  sizes(): DatabaseFile[]
  /** What the start log warns about, found at open (SQLite: a database file other users may read). */
  readonly warnings: readonly string[]
  /**
   * The console rollup's reads on a thread with a connection of their own
   * (SQLite: store/sqlite/rollup-planner.ts), so that no recount runs on the
   * request thread; null where reads never hold up the event loop
   * (PostgreSQL answers over the network) or there is no file (`:memory:`).
   */
  startRollupPlanner(): OffThreadPlanner | null
  /**
   * The console's aggregate reads on a thread with a connection of their own,
   * started on the first read (SQLite: store/sqlite/console-reader.ts) and
   * ended with the background work; null where reads never hold up the event
   * loop (PostgreSQL) or there is no file (`:memory:`).
   */
  consoleReads(): OffThreadReads | null
  /** Work that runs beside the requests for as long as the server does (`serve` starts it; nothing on some engines). */
  startBackground(hooks: BackgroundHooks): void
  /** Stops the background work; resolves once it has let go of the database. */
  stopBackground(): Promise<void>
  /** An online, consistent copy of the database into `file`; an engine that cannot make one refuses with the way to do it. */
  backup(file: string, opts?: { force?: boolean }): Promise<BackupResult>
  /** Stops the background work without waiting, refuses later writes and closes the connections. */
  close(): Promise<void>
}
