/**
 * The embedded engine's Storage (otp/ports/storage.ts): one writer connection
 * with group commit, one reader connection. `write` calls made in one turn of
 * the event loop share one IMMEDIATE transaction and one COMMIT, in call order
 * (`first` calls ahead; past a turn's share, BATCH_MS or more, the rest wait for the next turn);
 * if one throws, the batch runs again with a savepoint per call, so only that
 * call's writes are undone (the port allows a second run). The write lock is
 * never waited for on the event loop (busy_timeout 0, tried again on a timer),
 * and a failed flush is fatal, as what is on disk is then unknown
 * (docs/reliability.md#storage-faults). Reads see committed state only.
 */
import type { Database, Statement } from 'bun:sqlite'
import type { Repos, Storage, WriteOptions } from '../../otp/ports/index.ts'
import type { Db } from './db.ts'
import { sqliteRepos } from './repos.ts'
import { StaleListeners } from './stale.ts'
import { Hasher } from '../../lib/secrets.ts'
import { VerificationIds } from '../../lib/verification-id.ts'
import { EVENT_ID_PURPOSE, type RowIds } from './event-store.ts'
import type { WriteTurn } from './write-turn.ts'

/** A bound on one batch, so one transaction never holds the write lock for long. */
export const MAX_BATCH = 256
/**
 * The writes stop taking calls once they have run this long in a turn of the
 * event loop, and the rest wait for the next turn: a wave of sends' writes is
 * committed over several turns, and a `first` write read in between (a
 * verify) joins the next batch ahead of them instead of waiting for the whole
 * wave. A turn's share is at least half what the loop's other work took since
 * the last cut, so that under a flood of other requests (refusals at the
 * ceiling) the queue still gets a third of the thread (docs/benchmarks.md#waves-of-slow-sends).
 */
export const BATCH_MS = 2
/** Retry delays while another process holds the lock: short at first, then at most this. */
const MAX_RETRY_MS = 25

/** The write lock stayed taken for the whole busy timeout. */
export class StorageBusyError extends Error {}
/** A flush failed earlier: this process acknowledges nothing more. */
export class StorageStoppedError extends Error {}

interface Pending {
  fn: (r: Repos) => Promise<unknown>
  resolve: (value: unknown) => void
  reject: (err: unknown) => void
  deadline: number
}

type Result = { ok: true; value: unknown } | { ok: false; err: unknown }

export interface SqliteStorageOptions {
  busyTimeoutMs: number
  /**
   * Event ids that name their row (store/sqlite/event-store.ts), under the
   * server secret; without it, under a key of this instance only (tests).
   */
  eventIds?: RowIds
  /** A flush failed: the process must stop without answering (store/sqlite/storage.ts header). */
  onFatal: (err: Error) => void
  /** Each failed write (not a busy wait), and each commit: readiness follows them. */
  onWriteResult?: (err: unknown) => void
}

export class SqliteStorage implements Storage {
  private readonly client: Database
  private readonly stmt: Record<'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollbackTo' | 'readBegin' | 'readEnd', Statement>
  private readonly repos: Repos
  private readonly readRepos: Repos
  private readonly stale = new StaleListeners()
  private readonly readStale = new StaleListeners()
  private readonly dataVersion: Statement<{ data_version: number }>
  private seenVersion = -1
  private queue: Pending[] = []
  /** `write(fn, { first: true })` calls: each batch takes them before `queue`. */
  private first: Pending[] = []
  private scheduled = false
  private retryDelay = 0
  private durable: (() => Promise<void>) | undefined
  private turn: WriteTurn | undefined
  private stopped: Error | undefined
  private running = false
  /** When a drain last left calls for the next turn (BATCH_MS). */
  private cutAt: number | undefined
  private reads: Promise<void> = Promise.resolve()

  constructor(
    writer: Db,
    reader: Db,
    private readonly opts: SqliteStorageOptions,
  ) {
    this.client = writer.$client
    // Busy waits are this class's timers, never a sleep inside SQLite on the
    // event loop: BEGIN IMMEDIATE is tried with no busy timeout (once it holds
    // the write lock, nothing in a WAL transaction waits), and the reader
    // never waits. The writer keeps the configured timeout otherwise.
    reader.$client.run('PRAGMA busy_timeout = 0')
    const q = (sql: string) => this.client.prepare(sql)
    this.stmt = {
      begin: q('BEGIN IMMEDIATE'),
      commit: q('COMMIT'),
      rollback: q('ROLLBACK'),
      savepoint: q('SAVEPOINT otpd_item'),
      release: q('RELEASE otpd_item'),
      rollbackTo: q('ROLLBACK TO otpd_item'),
      readBegin: reader.$client.prepare('BEGIN'),
      readEnd: reader.$client.prepare('COMMIT'),
    }
    this.dataVersion = this.client.prepare('PRAGMA data_version')
    const eventIds = opts.eventIds ?? new VerificationIds(new Hasher(crypto.getRandomValues(new Uint8Array(32))), EVENT_ID_PURPOSE)
    this.repos = sqliteRepos(writer, this.stale, eventIds)
    this.readRepos = sqliteRepos(reader, this.readStale, eventIds)
  }

  /** Makes every write settle only after `durable()` resolves, called once per batch after its COMMIT. */
  settleAfter(durable: () => Promise<void>): void {
    this.durable = durable
  }

  /** Batches are written only while holding `turn` (store/sqlite/write-turn.ts). */
  shareWritesWith(turn: WriteTurn): void {
    this.turn = turn
  }

  onStale(listener: () => void): void {
    this.stale.onStale(listener)
  }

  /**
   * Resolves once every write made before this call has committed and is
   * durable (or failed): a write queued now runs after them, and batches are
   * flushed in order.
   */
  async settled(): Promise<void> {
    await this.write(async () => undefined).catch(() => undefined)
  }

  /** The connections are about to close: later and queued writes are refused, nothing is fatal. */
  close(): void {
    this.stopped ??= new StorageStoppedError('storage closed: otpd is stopping')
    for (const item of this.takeAll()) item.reject(this.stopped)
  }

  /** Every write here shares its batch's transaction already (group commit, above). */
  writeShared<T>(fn: (r: Repos) => Promise<T>): Promise<T> {
    return this.write(fn)
  }

  write<T>(fn: (r: Repos) => Promise<T>, opts?: WriteOptions): Promise<T> {
    if (this.stopped) return Promise.reject(this.stopped)
    return new Promise<T>((resolve, reject) => {
      const queue = opts?.first ? this.first : this.queue
      queue.push({ fn, resolve: resolve as (v: unknown) => void, reject, deadline: performance.now() + this.opts.busyTimeoutMs })
      this.schedule()
    })
  }

  read<T>(fn: (r: Repos) => Promise<T>): Promise<T> {
    if (this.stopped) return Promise.reject(this.stopped)
    // One read transaction at a time on the reader connection: a read awaits
    // its repositories, and another read must not BEGIN meanwhile.
    const result = this.reads.then(() => this.readNow(fn))
    this.reads = result.then(
      () => undefined,
      () => undefined,
    )
    return result
  }

  private async readNow<T>(fn: (r: Repos) => Promise<T>): Promise<T> {
    const deadline = performance.now() + this.opts.busyTimeoutMs
    for (let delay = 1; ; delay = Math.min(delay * 2, MAX_RETRY_MS)) {
      // Copies the read stores keep are good for one read transaction only.
      this.readStale.fire()
      try {
        this.stmt.readBegin.run()
        try {
          return await fn(this.readRepos)
        } finally {
          this.stmt.readEnd.run()
        }
      } catch (err) {
        if (!isBusy(err) || performance.now() + delay > deadline) throw err
      }
      await Bun.sleep(delay)
    }
  }

  private schedule(): void {
    if (this.scheduled) return
    this.scheduled = true
    // After this turn's I/O callbacks: every request read in this turn joins the batch.
    if (this.retryDelay === 0) setImmediate(() => void this.drain())
    else setTimeout(() => void this.drain(), this.retryDelay)
  }

  private async drain(): Promise<void> {
    if (this.running) {
      // A write awaited something outside its repositories (the port forbids it): never two transactions at once.
      setImmediate(() => void this.drain())
      return
    }
    const turn = this.turn
    if (turn && !turn.take()) {
      // The checkpoint worker is copying the WAL's last frames: the batch waits (and grows).
      turn.whenFree(() => void this.drain())
      return
    }
    this.scheduled = false
    this.running = true
    const start = performance.now()
    const until = start + Math.max(BATCH_MS, this.cutAt === undefined ? 0 : (start - this.cutAt) / 2)
    this.cutAt = undefined
    try {
      while (this.first.length + this.queue.length > 0 && !this.stopped) {
        const batch = this.takeBatch()
        if (await this.commitBatch(batch, until)) {
          this.retryDelay = 0
          // This turn's share is spent: the rest in a later turn, after what the loop reads meanwhile.
          if (this.first.length + this.queue.length > 0 && performance.now() >= until) {
            this.cutAt = performance.now()
            this.schedule()
            return
          }
          continue
        }
        // The write lock is taken: give up on calls past their busy timeout, try the rest again later.
        const now = performance.now()
        const busy = new StorageBusyError(
          `database is locked: another process held the write lock for ${this.opts.busyTimeoutMs} ms (database.busy_timeout_ms)`,
        )
        for (const item of batch) if (item.deadline <= now) item.reject(busy)
        this.queue.unshift(...batch.filter((item) => item.deadline > now))
        if (this.first.length + this.queue.length > 0) {
          this.retryDelay = Math.min(Math.max(1, this.retryDelay * 2), MAX_RETRY_MS)
          this.schedule()
        }
        return
      }
      this.retryDelay = 0
    } finally {
      this.running = false
      turn?.give()
    }
  }

  /** `first` calls, then the others in call order, up to MAX_BATCH. */
  private takeBatch(): Pending[] {
    const batch = this.first.splice(0, MAX_BATCH)
    if (batch.length < MAX_BATCH) batch.push(...this.queue.splice(0, MAX_BATCH - batch.length))
    return batch
  }

  private takeAll(): Pending[] {
    return [...this.first.splice(0), ...this.queue.splice(0)]
  }

  /**
   * One batch in one transaction. False when the write lock was taken: nothing
   * ran, nothing settled. Calls past `until` go back to the head of the queue
   * (`batch` keeps those that ran).
   */
  private async commitBatch(batch: Pending[], until: number): Promise<boolean> {
    const s = this.stmt
    let results: Result[] = []
    try {
      this.beginNow()
      this.checkVersion()
      // Fast path: the calls one after another, no savepoints (each costs
      // SQLite a copy of every page the call touches first).
      let thrown: unknown
      for (let i = 0; i < batch.length; i++) {
        try {
          results.push({ ok: true, value: await batch[i]!.fn(this.repos) })
        } catch (err) {
          thrown = err ?? new Error('a write threw nothing')
          break
        }
        if (i < batch.length - 1 && performance.now() >= until) this.queue.unshift(...batch.splice(i + 1))
      }
      if (thrown !== undefined) {
        if (isBusy(thrown)) throw thrown
        // A call failed, its partial writes mixed with the others': undo all,
        // then run the batch again with a savepoint per call.
        this.rollback()
        results = []
        this.beginNow()
        for (const item of batch) {
          s.savepoint.run()
          try {
            const value = await item.fn(this.repos)
            s.release.run()
            results.push({ ok: true, value })
          } catch (err) {
            if (isBusy(err)) throw err
            s.rollbackTo.run()
            s.release.run()
            this.stale.fire()
            results.push({ ok: false, err })
          }
        }
      }
      s.commit.run()
    } catch (err) {
      // A failed fsync inside COMMIT (synchronous = FULL without the flush
      // worker): the commit may be on disk or not, so it is fatal too.
      if (isFsyncFailure(err)) {
        this.fail(err, batch)
        return true
      }
      // BEGIN, a statement or COMMIT failed: nothing of the batch is in force.
      this.rollback()
      if (isBusy(err)) return false
      this.opts.onWriteResult?.(err)
      for (const item of batch) item.reject(err)
      return true
    }
    this.opts.onWriteResult?.(null)
    const settle = () =>
      batch.forEach((item, i) => {
        const r = results[i]!
        if (r.ok) item.resolve(r.value)
        else item.reject(r.err)
      })
    if (this.durable === undefined) {
      settle()
      return true
    }
    this.durable().then(settle, (err: unknown) => this.fail(err, batch))
    return true
  }

  /** BEGIN IMMEDIATE without waiting: SQLITE_BUSY at once when another connection writes. */
  private beginNow(): void {
    // Not prepared statements: SQLite applies a PRAGMA when it compiles it, so
    // running a prepared one again would not set the timeout again.
    this.client.run('PRAGMA busy_timeout = 0')
    try {
      this.stmt.begin.run()
    } finally {
      this.client.run(`PRAGMA busy_timeout = ${Math.trunc(this.opts.busyTimeoutMs)}`)
    }
  }

  private rollback(): void {
    try {
      if (this.client.inTransaction) this.stmt.rollback.run()
    } catch (err) {
      // The connection's state is unknown: as with a failed flush, stop.
      this.fail(err, [])
    }
    this.stale.fire()
  }

  /** What is on disk is unknown: stop acknowledging anything (see the header). */
  private fail(err: unknown, batch: Pending[]): void {
    const cause = err instanceof Error ? err : new Error(String(err))
    if (!this.stopped) {
      this.stopped = new StorageStoppedError(`storage stopped after a failure: ${cause.message}`)
      this.opts.onFatal(cause)
    }
    // Reached only where onFatal does not end the process (tests).
    for (const item of [...batch, ...this.takeAll()]) item.reject(this.stopped)
  }

  /** Inside a transaction: tells the listeners if another connection has committed since the last look. */
  private checkVersion(): void {
    const v = this.dataVersion.get()!.data_version
    if (v !== this.seenVersion) {
      this.seenVersion = v
      this.stale.fire()
    }
  }
}

/** SQLite's own flush failed: whether the commit reached the disk is unknown. */
function isFsyncFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return code === 'SQLITE_IOERR_FSYNC' || code === 'SQLITE_IOERR_DIR_FSYNC'
}

/** SQLITE_BUSY and its extended codes: another connection holds a lock. */
export function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY')
}
