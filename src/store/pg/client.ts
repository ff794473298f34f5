/**
 * The PostgreSQL client: Bun's built-in `SQL` (docs/benchmarks.md#the-postgresql-client),
 * behind the one small interface the stores use. A pool of
 * `database.pool_size` connections per process; a query that finds all busy
 * waits (a pool too small is slower, never failing); a dead connection is
 * replaced by the next query, so the process reconnects by itself. A row lock
 * waits at most `busy_timeout_ms` (lock_timeout), then the statement fails with
 * nothing in force, like SQLite's busy timeout.
 */
import { SQL } from 'bun'
import type { PgConnection } from '../../config/database.ts'

/**
 * Statements inside a transaction or on the pool. Every one goes as a named
 * prepared statement (Bun's `unsafe` with values prepares and caches it per
 * connection, as a tagged template does; only a statement without values
 * would go as a simple query, slower and never pipelined: give every
 * statement at least one parameter).
 */
export interface Tx {
  q<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>
  /** Rows the statement wrote (INSERT/UPDATE/DELETE). */
  run(text: string, params?: unknown[]): Promise<number>
  /**
   * A statement whose result nothing reads (a lock, an insert, an update), sent
   * at once, pipelined: the server runs a connection's statements in order, so
   * a lock taken this way holds for every statement after it as if awaited. Its
   * failure rejects the next q/run, or the COMMIT, with its own error, and
   * PostgreSQL rolls the transaction back: nothing of it is in force.
   */
  exec(text: string, params: unknown[]): void
  /**
   * A step run after the transaction's work, right before its COMMIT (in the
   * order given): a lock taken there is held only for the COMMIT. Outside a
   * transaction it runs at once.
   */
  atCommit(step: () => Promise<void>): Promise<void>
}

/**
 * The SQLSTATE of `otpd_key_hit` (migration 0008) when an admission decided
 * without the key's lock no longer holds at COMMIT (another transaction
 * filled the window meanwhile): the storage runs the write again, which then
 * decides on the window as it is.
 */
export const KEY_WINDOW_FULL = 'OT429'

export interface ClientOptions {
  poolSize: number
  lockTimeoutMs: number
  /** How long opening one connection may take before its query fails. */
  connectTimeoutS?: number
}

export function openClient(c: PgConnection, opts: ClientOptions): SQL {
  return new SQL({
    adapter: 'postgres',
    hostname: c.hostname,
    port: c.port,
    // A unix socket when the host is a directory (config/database.ts); Bun's `path` then replaces hostname and port.
    ...(c.socket === undefined ? {} : { path: c.socket }),
    username: c.username,
    password: c.password,
    database: c.database,
    max: opts.poolSize,
    connectionTimeout: opts.connectTimeoutS ?? 5,
    idleTimeout: 60,
    // READ COMMITTED whatever the server's default: the locks of store/pg/locks.ts rely on each
    // statement after a lock wait seeing what the previous holder committed (a repeatable-read
    // snapshot, taken before the wait, would not see a recipient's newest send).
    connection: { application_name: 'otpd', lock_timeout: `${Math.trunc(opts.lockTimeoutMs)}ms`, default_transaction_isolation: 'read committed' },
  })
}

/** A query as Bun runs it: lazy until executed, then a promise of its rows. */
type Query = Promise<unknown> & { execute(): unknown }

/**
 * The statements of one transaction on its reserved connection, or of one
 * read on the pool. `exec`'s statements are checked, in order, before the
 * next q/run answers (`settle`).
 */
export class PipelinedTx implements Tx {
  private sent: Promise<unknown>[] = []
  /** The checks of statements sent so far, in order (settle). */
  private checked: Promise<void> = Promise.resolve()
  /** The first failure among exec's statements, once known. */
  failure: unknown
  /** atCommit's steps, for the storage to run before COMMIT. */
  readonly commitSteps: (() => Promise<void>)[] = []

  /** `pipelined`: one connection, statements sent without waiting (a transaction); else the pool, one after another. */
  constructor(
    private readonly sql: SQL,
    private readonly pipelined: boolean,
  ) {}

  /** Starts `query` now; its failure is kept for `settle`. */
  track(query: Query): Promise<unknown> {
    query.execute()
    query.catch((err: unknown) => {
      this.failure ??= err
    })
    this.sent.push(query)
    return query
  }

  exec(text: string, params: unknown[]): void {
    if (this.pipelined) {
      this.track(this.sql.unsafe(text, params) as unknown as Query)
      return
    }
    // On the pool, statements may land on different connections: each waits for the one before.
    const before = this.sent.at(-1) ?? Promise.resolve()
    const p = before.then(() => this.sql.unsafe(text, params))
    p.catch((err: unknown) => {
      this.failure ??= err
    })
    this.sent.push(p)
  }

  async q<T>(text: string, params: unknown[] = []): Promise<T[]> {
    if (!this.pipelined) await this.settle()
    const query = this.sql.unsafe(text, params) as unknown as Query
    if (!this.pipelined) return (await query) as T[]
    // Sent behind what exec sent; answered only once those are known to have worked.
    query.execute()
    // A read that fails aborts the transaction as a statement of exec's does: the
    // reads behind it then fail with "transaction is aborted", and each answers the first failure.
    query.catch((err: unknown) => {
      this.failure ??= err
    })
    await this.settle()
    try {
      return (await query) as T[]
    } catch (err) {
      throw this.failure ?? err
    }
  }

  async atCommit(step: () => Promise<void>): Promise<void> {
    if (this.pipelined) this.commitSteps.push(step)
    else await step()
  }

  async run(text: string, params: unknown[] = []): Promise<number> {
    return ((await this.q(text, params)) as unknown as { count: number }).count
  }

  /**
   * Waits for every statement sent so far; throws the first failure. Reads
   * may be in flight together (`Promise.all` in the domain, one round trip
   * for all of them): each call also waits for the statements an earlier,
   * concurrent call took to check, so no read answers before everything sent
   * ahead of it is known to have worked.
   */
  settle(): Promise<void> {
    const sent = this.sent
    this.sent = []
    const before = this.checked
    const checked = (async () => {
      await before
      for (const p of sent) await p
      if (this.failure !== undefined) throw this.failure
    })()
    // The chain itself never rejects: each caller gets the failure from its own `checked`.
    this.checked = checked.catch(() => undefined)
    return checked
  }
}

/** Statements on the pool (no transaction): what `Storage.read` uses. */
export function txOf(sql: SQL): PipelinedTx {
  return new PipelinedTx(sql, false)
}

/** The SQLSTATE of a server error (`40P01`), if it is one. */
export function sqlState(err: unknown): string | undefined {
  const e = err as { code?: unknown; errno?: unknown } | null
  return e?.code === 'ERR_POSTGRES_SERVER_ERROR' && typeof e.errno === 'string' ? e.errno : undefined
}

/** Serialization failure, deadlock, or an admission race (KEY_WINDOW_FULL): the transaction was rolled back and may simply run again. */
export function isRetryable(err: unknown): boolean {
  const state = sqlState(err)
  return state === '40001' || state === '40P01' || state === KEY_WINDOW_FULL
}

/**
 * The database is unreachable or going away (connection refused or lost,
 * shutting down, starting up, too many connections): what /readyz reports.
 */
export function isConnectionFault(err: unknown): boolean {
  const e = err as { code?: unknown } | null
  if (typeof e?.code === 'string' && e.code.startsWith('ERR_POSTGRES_') && e.code !== 'ERR_POSTGRES_SERVER_ERROR') return true
  const state = sqlState(err)
  return state !== undefined && /^(08|57|53|58)/.test(state)
}

/**
 * A failure of the database rather than of one statement's data: the
 * connection faults above, and any server error but data (22), integrity (23),
 * transaction rollback (40) and lock timeout (55P03) ones, e.g. a read-only standby (25006) after
 * a failover. /readyz reports the database not ready while writes fail so.
 */
export function isDatabaseFault(err: unknown): boolean {
  if (isConnectionFault(err)) return true
  const state = sqlState(err)
  // A lock wait past busy_timeout_ms (55P03) is contention, as SQLite's busy timeout: not the database failing.
  return state !== undefined && !/^(22|23|40)/.test(state) && state !== '55P03'
}
