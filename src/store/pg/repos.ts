/**
 * The PostgreSQL repositories of one transaction (otp/ports/storage.ts Repos), or
 * of the pool for reads; one file per table group, as in store/sqlite/. A new
 * group follows its SQLite version: its table in schema.ts, `bun run
 * db:generate:pg --name <topic>` and migrations/index.ts, its statements in
 * store/sql/, a store taking `(tx, locks)` whose rules first lock their subject
 * in the order of locks.ts, and its line here; test/store/contract/ then runs
 * the same cases on both engines.
 */
import type { Repos } from '../../otp/ports/index.ts'
import { POSTGRES } from '../sql/dialect.ts'
import type { Param } from '../sql/values.ts'
import { SqlHookKeyStore } from '../sql/hooks.ts'
import { SqlStatsStore } from '../sql/stats-store.ts'
import { SqlWorkflowStore } from '../sql/workflows.ts'
import { PgAdminStore } from './admin-store.ts'
import { PgCreditStore } from './credit-store.ts'
import { PgKeyStore } from './key-store.ts'
import type { Tx } from './client.ts'
import { PgKeyHitLog, PgRecipientFailureLog } from './event-logs.ts'
import { PgEventOutbox } from './event-store.ts'
import { PgFraudStore } from './fraud-store.ts'
import { PgIdempotencyStore } from './idempotency-store.ts'
import { TxLocks } from './locks.ts'
import { PgAuditLog, PgOperatorRepo } from './operator-store.ts'
import { PgVerificationStore } from './verification-store.ts'
import { PgWebhookRepo } from './webhook-store.ts'

/** `locking`: inside a write transaction, each rule's subject is locked before it is read (store/pg/locks.ts). */
export function pgRepos(tx: Tx, locking: boolean): Repos {
  const locks = new TxLocks(tx, locking)
  // The console's rollups and reads take no lock: the rollup's cursor is a compare-and-set (otp/rollup.ts).
  const runner = { all: (text: string, params: Param[]) => tx.q(text, params), run: async (text: string, params: Param[]) => tx.exec(text, params) }
  const stats = new SqlStatsStore(runner, POSTGRES)
  return {
    keys: new PgKeyStore(tx),
    hookKeys: new SqlHookKeyStore(runner),
    keyHits: new PgKeyHitLog(tx),
    failures: new PgRecipientFailureLog(tx, locks),
    verifications: new PgVerificationStore(tx, locks),
    workflows: new SqlWorkflowStore(runner),
    credits: new PgCreditStore(tx),
    admin: new PgAdminStore(tx),
    events: new PgEventOutbox(tx, locks),
    webhooks: new PgWebhookRepo(tx, locks),
    idempotency: new PgIdempotencyStore(tx, locks),
    fraud: new PgFraudStore(tx, locks),
    operators: new PgOperatorRepo(tx, locks),
    audit: new PgAuditLog(tx),
    rollups: stats,
    stats,
  }
}
