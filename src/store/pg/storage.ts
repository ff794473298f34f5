/**
 * The PostgreSQL engine's Storage (otp/ports/storage.ts): `write` is one READ
 * COMMITTED transaction on a pooled connection, in which every rule locks its
 * subject before reading it (store/pg/locks.ts), its statements pipelined
 * (store/pg/client.ts); `read` sees committed state only. A COMMIT whose answer
 * is lost is settled by the transaction's id (docs/multi-node.md#a-commit-whose-answer-is-lost);
 * `writeShared` commits queued sends' outcomes together (docs/benchmarks.md#postgresql-round-trips).
 * The pool opens a new connection per request, so a node recovers when the database does.
 */
import type { ReservedSQL, SQL } from 'bun'
import type { Repos, Storage } from '../../otp/ports/index.ts'
import { isDatabaseFault, isRetryable, PipelinedTx, txOf, type Tx } from './client.ts'
import { pgRepos } from './repos.ts'

/** A deadlock or serialization failure (40P01, 40001) runs again after a short random pause, up to this many times in all. */
export const MAX_ATTEMPTS = 10
/** A bound on one shared transaction, so that it never holds many rows' locks for long. */
export const MAX_SHARED = 64
/** How long a write whose COMMIT answer was lost asks the database for its outcome before it gives up. */
export const RESOLVE_WITHIN_MS = 5_000
const RESOLVE_PAUSE_MS = 100

/** The storage is closed: otpd is stopping. */
export class PgStorageClosedError extends Error {}

/** A COMMIT was sent, its answer lost, and the database could not say within the bound whether it landed. */
export class PgCommitUnknownError extends Error {}

/** The transaction-id functions of the server's version (pg_current_xact_id since PostgreSQL 13). */
export type XactFunctions = 'xact' | 'txid'

export function xactFunctionsFor(serverVersionNum: number): XactFunctions {
  return serverVersionNum >= 130000 ? 'xact' : 'txid'
}

/** A write waiting for a shared transaction. */
interface SharedWrite {
  fn: (r: Repos) => Promise<unknown>
  resolve: (value: unknown) => void
  reject: (err: unknown) => void
}

/** A query as Bun runs it: lazy until executed. */
type Query = Promise<unknown> & { execute(): unknown }

const STATUS: Record<XactFunctions, string> = {
  xact: 'SELECT pg_xact_status($1::xid8) AS status',
  txid: 'SELECT txid_status($1::bigint) AS status',
}

/** The transaction about to commit, for the test hook. */
export interface CommitPoint {
  xid: string
  /** The backend's process id (pg_terminate_backend). */
  pid: number
  tx: Tx
}

export interface PgStorageOptions {
  /** Each write's end: null when it committed, else a failure of the database (readiness follows them, store/write-health.ts). */
  onWriteResult?: (err: unknown) => void
  /** Where a lost COMMIT's outcome is asked: a client of its own, so that a busy pool never delays it (default: the pool). */
  resolver?: SQL
  /** The server's transaction-id functions (default: PostgreSQL 13 and later). */
  xact?: XactFunctions
  resolveWithinMs?: number
}

export class PgStorage implements Storage {
  private readonly stale: (() => void)[] = []
  private closed: Error | undefined
  private readonly inFlight = new Set<Promise<unknown>>()
  /** writeShared's calls waiting for the next shared transaction, and whether one is running. */
  private readonly queued: SharedWrite[] = []
  private sharing = false
  private readonly xact: XactFunctions
  private readonly status: string
  /** Tests only: runs inside each write just before its COMMIT (a fault injected here is real: a killed backend, a stopped server). */
  beforeCommit: ((at: CommitPoint) => Promise<void>) | undefined
  /** How long a lost COMMIT's outcome is asked for (RESOLVE_WITHIN_MS unless given). */
  resolveWithinMs: number

  constructor(
    private readonly sql: SQL,
    private readonly opts: PgStorageOptions = {},
  ) {
    this.xact = opts.xact ?? 'xact'
    this.status = STATUS[opts.xact ?? 'xact']
    this.resolveWithinMs = opts.resolveWithinMs ?? RESOLVE_WITHIN_MS
  }

  /** Rollbacks: what a process remembers from a transaction that did not commit may be wrong. */
  onStale(listener: () => void): void {
    this.stale.push(listener)
  }

  write<T>(fn: (r: Repos) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(this.closed)
    const p = this.writeNow(fn)
    this.inFlight.add(p)
    const done = () => this.inFlight.delete(p)
    p.then(done, done)
    return p
  }

  read<T>(fn: (r: Repos) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(this.closed)
    return this.readNow(fn)
  }

  writeShared<T>(fn: (r: Repos) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(this.closed)
    const p = new Promise<T>((resolve, reject) => {
      this.queued.push({ fn, resolve: resolve as (value: unknown) => void, reject })
      if (this.sharing) return
      this.sharing = true
      // The writes made in this turn of the event loop go together.
      setImmediate(() => void this.runShared())
    })
    this.inFlight.add(p)
    const done = () => this.inFlight.delete(p)
    p.then(done, done)
    return p
  }

  /** One shared transaction after another until none is queued (see above). */
  private async runShared(): Promise<void> {
    while (this.queued.length > 0) {
      const batch = this.queued.splice(0, MAX_SHARED)
      if (batch.length === 1) {
        const w = batch[0]!
        await this.writeNow(w.fn).then(w.resolve, w.reject)
        continue
      }
      try {
        const values = await this.writeNow(async (r) => {
          // Every one runs to its end before the transaction ends: none may still be sending statements at its ROLLBACK.
          const ran = await Promise.allSettled(batch.map((w) => w.fn(r)))
          const failed = ran.find((x) => x.status === 'rejected')
          if (failed) throw failed.reason
          return ran.map((x) => (x as PromiseFulfilledResult<unknown>).value)
        })
        for (const [i, w] of batch.entries()) w.resolve(values[i])
      } catch (err) {
        if (err instanceof PgCommitUnknownError) {
          for (const w of batch) w.reject(err)
          continue
        }
        await Promise.all(batch.map((w) => this.writeNow(w.fn).then(w.resolve, w.reject)))
      }
    }
    this.sharing = false
  }

  private async readNow<T>(fn: (r: Repos) => Promise<T>): Promise<T> {
    const tx = txOf(this.sql)
    const value = await fn(pgRepos(tx, false))
    await tx.settle()
    return value
  }

  /** Resolves once every write started before this call has ended. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.inFlight])
  }

  /** Later writes and reads are refused (the pool is closed by the engine). */
  close(): void {
    this.closed ??= new PgStorageClosedError('storage closed: otpd is stopping')
  }

  private async writeNow<T>(fn: (r: Repos) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        const value = await this.transaction(fn)
        this.opts.onWriteResult?.(null)
        return value
      } catch (err) {
        for (const listener of this.stale) listener()
        if (isRetryable(err) && attempt < MAX_ATTEMPTS) {
          await Bun.sleep(Math.random() * 5 * attempt)
          continue
        }
        if (isDatabaseFault(err)) this.opts.onWriteResult?.(err)
        else if (err instanceof PgCommitUnknownError) this.opts.onWriteResult?.(err.cause)
        throw err
      }
    }
  }

  /** One run of `fn` in a transaction on a connection of the pool; what a lost COMMIT did is asked (see above). */
  private async transaction<T>(fn: (r: Repos) => Promise<T>): Promise<T> {
    const conn: ReservedSQL = await this.sql.reserve()
    const tx = new PipelinedTx(conn, true)
    let commitSent = false
    try {
      // BEGIN and the transaction's id travel with the transaction's first statement: no round trip of their own.
      tx.track(conn`BEGIN` as unknown as Query)
      const ident = tx.track(
        (this.xact === 'xact'
          ? conn`SELECT pg_current_xact_id()::text AS xid, pg_backend_pid() AS pid`
          : conn`SELECT txid_current()::text AS xid, pg_backend_pid() AS pid`) as unknown as Query,
      ) as Promise<{ xid: string; pid: number }[]>
      const value = await fn(pgRepos(tx, true))
      for (const step of tx.commitSteps) await step()
      const { xid, pid } = (await ident)[0]!
      if (this.beforeCommit) {
        await tx.settle()
        await this.beforeCommit({ xid, pid, tx })
      }
      // A statement that failed before reaching the server (its failure is known by now) must not let the rest commit.
      if (tx.failure !== undefined) throw tx.failure
      // COMMIT pipelined behind the last statements: if one of them fails, PostgreSQL answers it with ROLLBACK.
      const commit = conn`COMMIT` as unknown as Query
      commit.execute()
      commit.catch(() => undefined)
      commitSent = true
      const failed = await tx.settle().then(
        () => undefined,
        (err: unknown) => err ?? new Error('a statement failed'),
      )
      let answer: { command?: string }
      try {
        answer = (await commit) as { command?: string }
      } catch (err) {
        // The answer to COMMIT is lost: ask what became of the transaction.
        const outcome = await this.outcome(xid)
        if (outcome === 'committed') return value
        if (outcome === 'aborted') throw failed ?? err
        throw new PgCommitUnknownError(
          `the answer to COMMIT was lost (${err instanceof Error ? err.message : String(err)}) and PostgreSQL could not be asked within ${this.resolveWithinMs} ms whether transaction ${xid} committed: it may be in force`,
          { cause: err },
        )
      }
      if (answer.command === 'COMMIT' && failed === undefined) return value
      throw failed ?? new Error(`PostgreSQL answered COMMIT with ${answer.command}: the transaction was rolled back`)
    } catch (err) {
      if (!commitSent) await (conn`ROLLBACK` as unknown as Promise<unknown>).catch(() => undefined)
      throw err
    } finally {
      conn.release()
    }
  }

  /** Whether transaction `xid` committed, asked until the bound; 'unknown' when the database could not tell in time. */
  private async outcome(xid: string): Promise<'committed' | 'aborted' | 'unknown'> {
    const resolver = this.opts.resolver ?? this.sql
    const deadline = performance.now() + this.resolveWithinMs
    for (;;) {
      const left = deadline - performance.now()
      if (left <= 0) return 'unknown'
      try {
        const rows = (await within(resolver.unsafe(this.status, [xid]), left)) as { status: string | null }[]
        const status = rows[0]?.status
        if (status === 'committed') return 'committed'
        if (status === 'aborted') return 'aborted'
        // null: too old for the commit log to tell (cannot happen within seconds); 'in progress': the backend is still ending it.
      } catch {
        // Unreachable for now: ask again until the bound.
      }
      await Bun.sleep(Math.min(RESOLVE_PAUSE_MS, Math.max(0, deadline - performance.now())))
    }
  }
}

function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('no answer in time')), ms)))
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer))
}
