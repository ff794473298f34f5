/**
 * The storage port: the transaction runner the domain writes and reads
 * through, and the repositories a transaction works with. Engines
 * (store/sqlite/, store/pg/) implement it; store/open-engine.ts opens one.
 *
 * Storage is asynchronous and may fail: every call may await (a networked
 * engine), a commit may fail, a connection may drop. The domain keeps every
 * rule that must hold under concurrency inside one `write` transaction, and
 * keeps no count in memory that another process or node could contradict.
 */
import type { AdminRepo } from './admin.ts'
import type { AuditLog } from './audit.ts'
import type { CreditStore } from './credits.ts'
import type { EventOutbox } from './events.ts'
import type { FraudStore } from './fraud.ts'
import type { HookKeyStore } from './hooks.ts'
import type { IdempotencyStore } from './idempotency.ts'
import type { FailureLog, KeyHitLog, KeyStore } from './keys.ts'
import type { OperatorRepo } from './operators.ts'
import type { RollupStore, StatsReads } from './stats.ts'
import type { VerificationStore } from './verifications.ts'
import type { WebhookRepo } from './webhooks.ts'
import type { WorkflowStore } from './workflows.ts'

/**
 * Runs the domain's transactions. `write` gives one transaction: all of its
 * writes land, or none. It resolves once the commit is durable, and rejects
 * when a statement or the commit fails (nothing of it is in force) or when the
 * engine could not get the write lock within its busy timeout. `fn` may run
 * more than once (an engine may retry it, or run it again after another
 * transaction of a shared commit failed): it may only await the repositories
 * it is given, and do nothing outside them that is unsafe to repeat.
 * `read` sees committed state only and never waits for the write lock.
 */
/**
 * `first`: a short write its client waits on (a verify). An engine that queues
 * writes may run it before writes queued earlier; what it decides is the same.
 */
export interface WriteOptions {
  first?: boolean
}

export interface Storage {
  write<T>(fn: (r: Repos) => Promise<T>, opts?: WriteOptions): Promise<T>
  /**
   * `write` for a change that touches only its own rows (a send's outcome):
   * the engine may run it in one transaction with other such writes, side by
   * side, so it must decide no rule another of them could change. It lands or
   * fails alone: when one of a shared transaction's writes fails, the others
   * run again in transactions of their own. A COMMIT whose outcome the engine
   * cannot learn fails them all, each possibly in force, as it would fail one
   * `write`.
   */
  writeShared<T>(fn: (r: Repos) => Promise<T>): Promise<T>
  read<T>(fn: (r: Repos) => Promise<T>): Promise<T>
  /**
   * `listener` hears when what this process remembers from earlier
   * transactions may no longer be what is stored (a rollback, or a write by
   * another process), so it can drop such copies.
   */
  onStale(listener: () => void): void
}

/** The repositories a transaction works with. */
export interface Repos {
  keys: KeyStore
  /** The keys the configured hooks send under. */
  hookKeys: HookKeyStore
  keyHits: KeyHitLog
  failures: FailureLog
  verifications: VerificationStore
  /** The steps of verifications sent with a workflow. */
  workflows: WorkflowStore
  credits: CreditStore
  admin: AdminRepo
  events: EventOutbox
  webhooks: WebhookRepo
  idempotency: IdempotencyStore
  fraud: FraudStore
  /** Console operators, sessions and sign-in attempts. */
  operators: OperatorRepo
  audit: AuditLog
  /** The console's rollups (otp/rollup.ts). */
  rollups: RollupStore
  /** The console's reads (docs/console.md). */
  stats: StatsReads
}
