/** The SQLite repositories of one connection (otp/ports.ts Repos). */
import type { Repos } from '../../otp/ports.ts'
import { SqliteAdminStore, SqliteCreditStore, SqliteKeyStore } from './admin-store.ts'
import type { Db } from './db.ts'
import { RecipientFailureLog, SqliteKeyHitLog } from './event-logs.ts'
import { SqliteFraudStore } from './fraud-store.ts'
import type { StaleSource } from './stale.ts'
import { SqliteVerificationStore } from './verification-store.ts'

export function sqliteRepos(db: Db, stale: StaleSource): Repos {
  const credits = new SqliteCreditStore(db, stale)
  return {
    keys: new SqliteKeyStore(db),
    keyHits: new SqliteKeyHitLog(db, stale),
    failures: new RecipientFailureLog(db),
    verifications: new SqliteVerificationStore(db, stale),
    credits,
    // A rollback of that write fires `stale`, which drops them again.
    admin: new SqliteAdminStore(db, () => credits.forgetCodeLengths()),
    // PLACEHOLDER during the session: the outbox (issue 23) replaces it.
    events: { add: async () => {} },
    fraud: new SqliteFraudStore(db, stale),
  }
}
