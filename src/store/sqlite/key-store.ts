/** API keys by prefix, and their last use (otp/ports/keys.ts): the shared statements of store/sql/keys.ts. */
import type { KeyStore } from '../../otp/ports/index.ts'
import type { StoredKey } from '../../otp/types.ts'
import { KEY_SQL, toStoredKey } from '../sql/keys.ts'
import type { Db } from './db.ts'
import { type Prepared, prepareShared } from './shared-sql.ts'

export class SqliteKeyStore implements KeyStore {
  private readonly q: Record<'findByPrefix' | 'touch', Prepared>
  constructor(db: Db) {
    this.q = prepareShared(db.$client, { findByPrefix: KEY_SQL.findByPrefix, touch: KEY_SQL.touch })
  }
  async findByPrefix(prefix: string): Promise<StoredKey[]> {
    return this.q.findByPrefix.all(prefix).map(toStoredKey)
  }
  async touch(keyId: number, at: number): Promise<void> {
    this.q.touch.run(keyId, at)
  }
}
