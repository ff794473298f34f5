/**
 * The embedded engine (store/engine.ts): one SQLite file, opened with its
 * start checks (store/sqlite/db.ts, start-checks.ts), a writer and a reader
 * connection behind the group-commit storage (storage.ts), and, while a
 * server runs, the WAL work on worker threads: checkpoints (checkpointer.ts)
 * and, with synchronous = FULL, the flush that makes a batch durable before
 * it is answered (wal-sync.ts).
 */
import { resolve } from 'node:path'
import { Hasher } from '../../lib/secrets.ts'
import { VerificationIds } from '../../lib/verification-id.ts'
import type { BackgroundHooks, BackupResult, DatabaseFile, Engine, OffThreadPlanner, OffThreadReads, SweepResult } from '../engine.ts'
import type { ConfiguredSecret } from '../secret.ts'
import { backupDatabase } from './backup.ts'
import { startCheckpointer, type Checkpointer } from './checkpointer.ts'
import { startConsoleReader } from './console-reader.ts'
import { startRollupPlanner } from './rollup-planner.ts'
import { migrationsCurrent, openDatabase, openReader, type Db, widerThanPrivate } from './db.ts'
import { EVENT_ID_PURPOSE } from './event-store.ts'
import { loadCheckedSecret } from './start-checks.ts'
import { databaseFileSizes } from './health.ts'
import { SqliteStorage } from './storage.ts'
import { sweep } from './sweep.ts'
import { startWalSync, type WalSync } from './wal-sync.ts'

export interface SqliteEngineOptions {
  path: string
  synchronous: 'FULL' | 'NORMAL'
  busyTimeoutMs: number
  /** The secret the config gives; without one, the file beside the database (store/secret.ts). */
  secret: ConfiguredSecret | undefined
  /** A failed flush: what is on disk is unknown, and the process must stop before answering (storage.ts). */
  onFatal: (err: Error) => void
  /** Each failed write (not a busy wait), and each commit: readiness follows them. */
  onWriteResult?: (err: unknown) => void
}

export class SqliteEngine implements Engine {
  readonly name = 'sqlite'
  readonly lateRows = false
  readonly display: string
  readonly storage: SqliteStorage
  readonly hasher: Hasher
  readonly warnings: readonly string[]
  /** The writer connection. Tests reach it; above the seam nothing does. */
  readonly db: Db
  private readonly reader: Db
  private checkpointer: Checkpointer | undefined
  private walSync: WalSync | undefined
  /** Its thread starts on the first read (console-reader.ts). */
  private offThreadReads: OffThreadReads | undefined
  /** For the rollup worker only (startRollupPlanner): it never leaves the process. */
  private readonly secret: Uint8Array

  constructor(private readonly opts: SqliteEngineOptions) {
    const { path, busyTimeoutMs } = opts
    // Absolute, as the start line shows it: a relative path depends on the directory otpd was started in.
    this.display = path === ':memory:' ? path : resolve(path)
    this.db = openDatabase({ path, synchronous: opts.synchronous, busyTimeoutMs })
    this.secret = loadCheckedSecret(this.db.$client, opts.secret, path)
    this.hasher = new Hasher(this.secret)
    this.reader = openReader(this.db, path)
    // After the open: the -wal and -shm files it made have the database file's mode.
    this.warnings = widerThanPrivate(path)
    this.storage = new SqliteStorage(this.db, this.reader, {
      busyTimeoutMs,
      onFatal: opts.onFatal,
      eventIds: new VerificationIds(this.hasher, EVENT_ID_PURPOSE),
      onWriteResult: opts.onWriteResult,
    })
  }

  async check(): Promise<void> {
    // Both connections answer: the writer (a statement of its own, so a
    // closed connection shows) and the reader.
    this.db.$client.prepare('SELECT 1').get()
    await this.storage.read((r) => r.admin.findAccount(''))
  }

  async migrationsCurrent(): Promise<boolean> {
    return migrationsCurrent(this.db.$client)
  }

  sweep(now: number, retentionDays: number, maxRows?: number, idempotencyRetentionHours?: number): Promise<SweepResult> {
    // In a write of its own: never beside a batch, and no lock wait on the event loop.
    return this.storage.write(async () => sweep(this.db, now, retentionDays, maxRows, idempotencyRetentionHours))
  }

  sizes(): DatabaseFile[] {
    return databaseFileSizes(this.opts.path)
  }

  startBackground(hooks: BackgroundHooks): void {
    const { path, busyTimeoutMs } = this.opts
    if (path === ':memory:' || this.checkpointer) return
    this.checkpointer = startCheckpointer(this.db, path, busyTimeoutMs, (error) => hooks.logger.error('WAL checkpoint failed', { error }))
    this.storage.shareWritesWith(this.checkpointer.turn)
    // FULL's guarantee with the fsync on a worker thread (wal-sync.ts).
    if (this.opts.synchronous !== 'FULL') return
    const walSync = startWalSync(
      path,
      // A failed flush is fatal: the storage's onFatal logs it, once.
      () => {},
      (ms) => hooks.onFlush(ms),
    )
    this.walSync = walSync
    this.db.$client.run('PRAGMA synchronous = NORMAL')
    this.storage.settleAfter(() => walSync.sync())
  }

  startRollupPlanner(): OffThreadPlanner | null {
    const { path, busyTimeoutMs } = this.opts
    return path === ':memory:' ? null : startRollupPlanner(path, this.secret, busyTimeoutMs)
  }

  consoleReads(): OffThreadReads | null {
    const { path, busyTimeoutMs } = this.opts
    if (path === ':memory:') return null
    this.offThreadReads ??= startConsoleReader(path, busyTimeoutMs)
    return this.offThreadReads
  }

  async stopBackground(): Promise<void> {
    // The console's read connection goes too: the server's is the last (it checkpoints the WAL and removes it).
    const stops = [this.checkpointer?.stop(), this.walSync?.stop(), this.offThreadReads?.stop()]
    this.checkpointer = this.walSync = undefined
    await Promise.all(stops)
  }

  async backup(file: string, opts: { force?: boolean } = {}): Promise<BackupResult> {
    return backupDatabase(this.db.$client, this.opts.path, file, opts)
  }

  async close(): Promise<void> {
    void this.stopBackground()
    this.storage.close()
    if (this.reader !== this.db) this.reader.$client.close()
    this.db.$client.close()
  }
}
