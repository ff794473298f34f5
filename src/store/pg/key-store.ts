/** API keys by prefix, and their last use (otp/ports/keys.ts): the shared statements of store/sql/keys.ts. */
import type { KeyStore } from '../../otp/ports/index.ts'
import type { StoredKey } from '../../otp/types.ts'
import { KEY_SQL, toStoredKey } from '../sql/keys.ts'
import type { Tx } from './client.ts'

export class PgKeyStore implements KeyStore {
  constructor(private readonly tx: Tx) {}
  async findByPrefix(prefix: string): Promise<StoredKey[]> {
    return (await this.tx.q(KEY_SQL.findByPrefix, [prefix])).map(toStoredKey)
  }
  /** At COMMIT, after the key's hit (store/pg/event-logs.ts): the key's row is written only while its lock is held. */
  async touch(keyId: number, at: number): Promise<void> {
    await this.tx.atCommit(async () => this.tx.exec(KEY_SQL.touch, [keyId, at]))
  }
}
