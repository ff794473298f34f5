/** IMMEDIATE transactions over the shared connection (see otp/ports.ts Transactor). */
import type { Transactor } from '../otp/ports.ts'
import type { Db } from './db.ts'

export class SqliteTransactor implements Transactor {
  constructor(private readonly db: Db) {}
  atomically<T>(fn: () => T): T {
    // IMMEDIATE takes the write lock up front: no read-then-upgrade deadlock
    // between the server and a CLI process. Nested calls become savepoints.
    return this.db.$client.transaction(fn).immediate()
  }
}
