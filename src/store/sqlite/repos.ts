/** The SQLite repositories of one connection (otp/ports/storage.ts Repos). */
import type { Repos } from '../../otp/ports/index.ts'
import { SQLITE } from '../sql/dialect.ts'
import { SqlHookKeyStore } from '../sql/hooks.ts'
import { SqlStatsStore } from '../sql/stats-store.ts'
import { SqlWorkflowStore } from '../sql/workflows.ts'
import { SqliteAdminStore } from './admin-store.ts'
import { SqliteCreditStore } from './credit-store.ts'
import { SqliteKeyStore } from './key-store.ts'
import type { Db } from './db.ts'
import { RecipientFailureLog, SqliteKeyHitLog } from './event-logs.ts'
import { SqliteEventOutbox, type RowIds } from './event-store.ts'
import { SqliteIdempotencyStore } from './idempotency-store.ts'
import { SqliteFraudStore } from './fraud-store.ts'
import { SqliteAuditLog, SqliteOperatorRepo } from './operator-store.ts'
import type { StaleSource } from './stale.ts'
import { SqliteVerificationStore } from './verification-store.ts'
import { SqliteWebhookRepo } from './webhook-store.ts'
import { sqliteRunner } from './runner.ts'

export function sqliteRepos(db: Db, stale: StaleSource, eventIds: RowIds): Repos {
  const credits = new SqliteCreditStore(db, stale)
  const events = new SqliteEventOutbox(db, stale, eventIds)
  const runner = sqliteRunner(db.$client)
  const stats = new SqlStatsStore(runner, SQLITE)
  return {
    keys: new SqliteKeyStore(db),
    hookKeys: new SqlHookKeyStore(runner),
    keyHits: new SqliteKeyHitLog(db, stale),
    failures: new RecipientFailureLog(db),
    verifications: new SqliteVerificationStore(db, stale, (v) => events.inserted(v.id, v.createdAt)),
    workflows: new SqlWorkflowStore(runner),
    credits,
    // A rollback of that write fires `stale`, which drops them again.
    admin: new SqliteAdminStore(db, () => credits.forgetProfiles()),
    events,
    webhooks: new SqliteWebhookRepo(db, eventIds, () => events.endpointsChanged()),
    idempotency: new SqliteIdempotencyStore(db),
    fraud: new SqliteFraudStore(db, stale, () => credits.forgetProfiles()),
    operators: new SqliteOperatorRepo(db),
    audit: new SqliteAuditLog(db),
    rollups: stats,
    stats,
  }
}
