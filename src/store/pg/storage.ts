/**
 * The PostgreSQL engine's Storage (otp/ports.ts): `write` is one transaction
 * at READ COMMITTED on a pooled connection, in which every rule locks its
 * subject before reading it (store/pg/locks.ts); `read` runs on the pool
 * without a transaction and sees committed state only.
 *
 * A transaction PostgreSQL aborts as a deadlock or serialization failure
 * (40P01, 40001) is run again, up to MAX_ATTEMPTS times in all, after a
 * short random pause: the port allows `fn` to run more than once. Any other
 * failure rejects with nothing in force. A lost connection is not retried
 * here (whether its COMMIT landed cannot be known from this side only when
 * the COMMIT itself was cut, which the port's 500 then covers); the pool
 * opens a new connection for the next request, so the node recovers by
 * itself when the database comes back.
 */
import type { SQL } from 'bun'
import type { Repos, Storage } from '../../otp/ports.ts'
import { isDatabaseFault, isRetryable, txOf } from './client.ts'
import { pgRepos } from './repos.ts'

export const MAX_ATTEMPTS = 10

/** The storage is closed: otpd is stopping. */
export class PgStorageClosedError extends Error {}

export interface PgStorageOptions {
  /** Each write's end: null when it committed, else a failure of the database (readiness follows them, store/write-health.ts). */
  onWriteResult?: (err: unknown) => void
}

export class PgStorage implements Storage {
  private readonly stale: (() => void)[] = []
  private closed: Error | undefined
  private readonly inFlight = new Set<Promise<unknown>>()
  private readonly readRepos: Repos

  constructor(
    private readonly sql: SQL,
    private readonly opts: PgStorageOptions = {},
  ) {
    this.readRepos = pgRepos(txOf(sql), false)
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
    return fn(this.readRepos)
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
        // Boxed: the client would treat a returned array as queries to run.
        const box = (await this.sql.begin(async (tx) => ({ value: await fn(pgRepos(txOf(tx), true)) }))) as { value: T }
        this.opts.onWriteResult?.(null)
        return box.value
      } catch (err) {
        for (const listener of this.stale) listener()
        if (isRetryable(err) && attempt < MAX_ATTEMPTS) {
          await Bun.sleep(Math.random() * 5 * attempt)
          continue
        }
        if (isDatabaseFault(err)) this.opts.onWriteResult?.(err)
        throw err
      }
    }
  }
}
