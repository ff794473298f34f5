/**
 * IMMEDIATE transactions over the shared connection (see otp/ports.ts
 * Transactor), and group commit for the request path.
 *
 * `grouped` calls made in one turn of the event loop run together in one
 * IMMEDIATE transaction with one COMMIT (one WAL fsync with synchronous =
 * FULL) instead of one each. The calls run in call order, so each sees the
 * writes of the calls before it exactly as if they had committed one by one.
 * If one throws, the batch is undone and run again with a savepoint per call,
 * so a call that throws undoes only its own writes (the others run twice,
 * which the Transactor port allows).
 * Every promise settles after the COMMIT returned: nothing is answered before
 * it is durable. Across processes the write lock is held for the whole batch,
 * so the rules that IMMEDIATE transactions keep exact stay exact.
 *
 * Stores may keep per-process copies of what they wrote (SqliteKeyHitLog's
 * sequence numbers). `onStale` listeners hear when such copies may be wrong:
 * at the start of a transaction when another connection has committed since
 * (PRAGMA data_version, one cheap read per transaction), after any
 * rollback, and after every `atomically` transaction (operator changes made
 * through this process).
 */
import type { Database, Statement } from 'bun:sqlite'
import type { Transactor } from '../otp/ports.ts'
import type { Db } from './db.ts'
import type { WriteTurn } from './write-turn.ts'

/** A bound on one batch, so one transaction never holds the write lock for long. */
export const MAX_BATCH = 256

interface Pending {
  fn: () => unknown
  resolve: (value: unknown) => void
  reject: (err: unknown) => void
}

export class SqliteTransactor implements Transactor {
  private readonly client: Database
  private readonly txn: ReturnType<Database['transaction']>
  private readonly stmt: Record<'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollbackTo', Statement>
  private queue: Pending[] = []
  private scheduled = false
  private readonly staleListeners: (() => void)[] = []
  private readonly dataVersion: Statement<{ data_version: number }>
  private seenVersion = -1
  private durable: (() => Promise<void>) | undefined
  private turn: WriteTurn | undefined

  constructor(db: Db) {
    this.client = db.$client
    // Built once: bun:sqlite passes the arguments through to the wrapped function.
    this.txn = this.client.transaction((fn: () => unknown) => fn())
    const q = (sql: string) => this.client.prepare(sql)
    this.stmt = {
      begin: q('BEGIN IMMEDIATE'),
      commit: q('COMMIT'),
      rollback: q('ROLLBACK'),
      savepoint: q('SAVEPOINT otpd_item'),
      release: q('RELEASE otpd_item'),
      rollbackTo: q('ROLLBACK TO otpd_item'),
    }
    this.dataVersion = this.client.prepare('PRAGMA data_version')
  }

  /**
   * Makes every grouped call settle only after `durable()` resolves, called
   * once per batch after its COMMIT (store/wal-sync.ts: the WAL fsync).
   */
  settleAfter(durable: () => Promise<void>): void {
    this.durable = durable
  }

  /**
   * Batches are written only while holding `turn` (store/write-turn.ts), which
   * the checkpoint worker takes now and then to let the WAL restart; a batch
   * that finds it taken waits for the worker to give it back.
   */
  shareWritesWith(turn: WriteTurn): void {
    this.turn = turn
  }

  onStale(listener: () => void): void {
    this.staleListeners.push(listener)
  }

  atomically<T>(fn: () => T): T {
    // IMMEDIATE takes the write lock up front: no read-then-upgrade deadlock
    // between the server and a CLI process. Nested calls become savepoints.
    try {
      return this.txn.immediate(() => {
        this.checkVersion()
        return fn()
      }) as T
    } finally {
      // Committed or rolled back: operator changes (accounts, keys, credits)
      // go through here, on the connection the request path uses, so
      // data_version does not show them; copies kept by the stores are dropped.
      this.stale()
    }
  }

  grouped<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject })
      if (!this.scheduled) {
        this.scheduled = true
        // After this turn's I/O callbacks: every request read in this turn joins the batch.
        setImmediate(() => this.flush())
      }
    })
  }

  private flush(): void {
    const turn = this.turn
    if (turn && !turn.take()) {
      // The checkpoint worker is copying the WAL's last frames: the batch
      // waits (and grows) until it is done; `scheduled` stays set meanwhile.
      turn.whenFree(() => this.flush())
      return
    }
    this.scheduled = false
    try {
      while (this.queue.length > 0) this.commitBatch(this.queue.splice(0, MAX_BATCH))
    } finally {
      turn?.give()
    }
  }

  private commitBatch(batch: Pending[]): void {
    type Result = { ok: true; value: unknown } | { ok: false; err: unknown }
    const s = this.stmt
    let results: Result[] = []
    try {
      s.begin.run()
      this.checkVersion()
      // Fast path: the calls one after another, no savepoints (each costs
      // SQLite a copy of every page the call touches first).
      let thrown = false
      for (const item of batch) {
        try {
          results.push({ ok: true, value: item.fn() })
        } catch {
          thrown = true
          break
        }
      }
      if (thrown) {
        // A call failed, its partial writes mixed with the others': undo all,
        // then run the batch again with a savepoint per call, so only the
        // failing call's writes are undone (ports.ts: calls may run twice).
        if (this.client.inTransaction) s.rollback.run()
        this.stale()
        results = []
        s.begin.run()
        for (const item of batch) {
          s.savepoint.run()
          try {
            const value = item.fn()
            s.release.run()
            results.push({ ok: true, value })
          } catch (err) {
            s.rollbackTo.run()
            s.release.run()
            this.stale()
            results.push({ ok: false, err })
          }
        }
      }
      s.commit.run()
    } catch (err) {
      // BEGIN or COMMIT failed (busy past busy_timeout, disk full): nothing of the batch landed.
      if (this.client.inTransaction) s.rollback.run()
      this.stale()
      for (const item of batch) item.reject(err)
      return
    }
    const settle = () =>
      batch.forEach((item, i) => {
        const r = results[i]!
        if (r.ok) item.resolve(r.value)
        else item.reject(r.err)
      })
    if (this.durable === undefined) return settle()
    this.durable().then(settle, (err) => {
      for (const item of batch) item.reject(err)
    })
  }

  /** Inside a transaction: tells the listeners if another connection committed since the last look. */
  private checkVersion(): void {
    const v = this.dataVersion.get()!.data_version
    if (v !== this.seenVersion) {
      this.seenVersion = v
      this.stale()
    }
  }

  private stale(): void {
    for (const listener of this.staleListeners) listener()
  }
}
