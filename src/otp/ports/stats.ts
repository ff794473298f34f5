/**
 * What the operator console reads (docs/console.md), and the rollups that
 * make its aggregates cheap: counts per bucket recounted in the background
 * from the verifications of that bucket (otp/rollup.ts), so that no page
 * aggregates the verifications table and the send and verify path writes
 * nothing for them.
 */
import type { Channel, Verification } from '../types.ts'
import type { EventDeliveryStatus } from './webhooks.ts'

/** Bucket sizes of the rollups (ms). */
export const SPAN = { minute: 60_000, hour: 3_600_000, quarterDay: 21_600_000, day: 86_400_000 } as const
export type Span = (typeof SPAN)[keyof typeof SPAN]

/** The counts a rollup row keeps. */
export interface RollupCounts {
  /** Real sends (test recipients left out) made in the bucket. */
  sends: number
  /** A provider took it (`accepted`, then maybe `delivered` or `undelivered`). */
  accepted: number
  /** A delivery receipt said delivered. */
  delivered: number
  /** A delivery receipt said undelivered. */
  undelivered: number
  /** No provider took it (refunded, out of use). */
  failed: number
  /** Its credit was refunded (failed, or unknown after a stop). */
  refunded: number
  /** Verified with the right code. */
  approved: number
  /** Let through by monitor mode although a fraud guard rule would have refused it. */
  monitored: number
  /** A hook's: its code is checked by an identity server, never here (docs/integrations.md#what-otpd-records). */
  checked: number
}

export const ROLLUP_COUNTS: readonly (keyof RollupCounts)[] = [
  'sends',
  'accepted',
  'delivered',
  'undelivered',
  'failed',
  'refunded',
  'approved',
  'monitored',
  'checked',
]

/** One rollup row: a bucket of one account, channel, country and provider (`''` for none). */
export interface RollupRow extends RollupCounts {
  span: Span
  at: number
  accountId: number
  channel: string
  country: string
  provider: string
}

/** The tables the rollup follows, each by its row number (events.seq, verifications.seq, credit_ledger.id). */
export type RollupSource = 'verifications' | 'events' | 'ledger'

/** A row of a source: what it says about which bucket changed. */
export interface SourceRow {
  seq: number
  accountId: number
  /** The verification it concerns (a ledger grant, a `send.blocked` event: none). */
  verificationId: string | null
  /** Its row number, where the source keeps it (events); else null, and it is read from the id. */
  verificationSeq: number | null
  /** When it was written: the bucket when its verification is gone. */
  at: number
  /** The event type, or the ledger row's kind; `verification` for a new verification. */
  kind: string
  /** A `send.blocked` event's body (else null). */
  body: string | null
}

/** Refusals counted per minute, account, rule and country (`''` for none). */
export interface RefusalRow {
  minute: number
  accountId: number
  rule: string
  country: string
  refusals: number
}

/** The fraud guard's counted sends and approvals of one prefix (in an hour, or over the last 24). */
export interface PrefixRow {
  accountId: number
  prefix: string
  sends: number
  approved: number
}

/** The maintenance side of the rollups (otp/rollup.ts). */
export interface RollupStore {
  /** The rollup's cursor (a JSON text it alone reads), or null before its first run. */
  cursor(): Promise<string | null>
  /** Replaces the cursor if it is still `prev`: false when another process moved it meanwhile. */
  moveCursor(prev: string | null, next: string): Promise<boolean>
  /** The rows of `source` after `after`, in order, at most `limit`. */
  sourceRows(source: RollupSource, after: number, limit: number): Promise<SourceRow[]>
  /** The rows of `source` with these numbers that exist. */
  sourceRowsAt(source: RollupSource, seqs: number[]): Promise<SourceRow[]>
  /** The largest row number of `source` (0 when empty). */
  sourceEnd(source: RollupSource): Promise<number>
  /** Creation times of the verifications with these row numbers, by number. */
  createdAt(seqs: number[]): Promise<Map<number, { id: string; createdAt: number }>>
  /** Counts of the real sends created in [from, to), per bucket of `span`, from the verifications themselves. */
  recount(from: number, to: number, span: Span): Promise<RollupRow[]>
  /** The stored rows of `span` with `at` in [from, to), of `accountId` (null: every account). */
  rows(span: Span, from: number, to: number, accountId: number | null): Promise<RollupRow[]>
  /** Writes these rows (replacing the counts of each key) and deletes the keys of `gone`. */
  saveRows(rows: RollupRow[], gone: RollupRow[]): Promise<void>
  /** Deletes rows of `span` older than `before`. */
  dropRows(span: Span, before: number): Promise<void>
  /** Adds these refusals to their minute's counts. */
  addRefusals(rows: RefusalRow[]): Promise<void>
  dropRefusals(before: number): Promise<void>
  /** Row numbers passed while absent, with when they were first missed. */
  gaps(source: RollupSource): Promise<{ seq: number; seenAt: number }[]>
  addGaps(source: RollupSource, seqs: number[], at: number): Promise<void>
  dropGaps(source: RollupSource, seqs: number[]): Promise<void>
  /** Counted sends of [from, to) and their approvals per account and prefix, from the fraud guard's own rows (fraud_sends). */
  prefixRecount(from: number, to: number): Promise<PrefixRow[]>
  /** The stored prefix rows of the hour starting at `hour`. */
  prefixHour(hour: number): Promise<PrefixRow[]>
  /** Writes the hour's rows (replacing counts) and deletes those of `gone`. */
  savePrefixHour(hour: number, rows: PrefixRow[], gone: PrefixRow[]): Promise<void>
  dropPrefixHours(before: number): Promise<void>
  /** Adds these counts (negative to take away) to the 24 h sums per prefix; a sum down to no sends goes. */
  addToPrefixes(deltas: PrefixRow[]): Promise<void>
}

/** Search of verifications, newest first (keyset: `before`, the last row's position). */
export interface VerificationSearch {
  from: number
  to: number
  accountId: number | null
  country: string | null
  /** A condition on the status at `now` (docs/api.md#verification-status). */
  status: 'pending' | 'approved' | 'expired' | 'locked' | 'canceled' | 'failed' | null
  now: number
  /** Continue after this position (created_at, seq). */
  before: { at: number; seq: number } | null
  limit: number
  /** At most this many verifications of the period are looked at per page. */
  budget: number
}

export interface SearchPage {
  rows: Verification[]
  /** Where the next page starts; null when the period has no more. */
  next: { at: number; seq: number } | null
}

/** One event of a verification's timeline. */
/** A send the fraud guard refused: its `send.blocked` event (the body's recipient is masked). */
export interface RefusedSend {
  id: string
  accountId: number
  occurredAt: number
  body: string
}

export interface TimelineEvent {
  sequence: number
  type: string
  occurredAt: number
  /** The event's exact body (recipients in it are masked). */
  body: string
}

/** A webhook delivery, newest event first. */
export interface DeliveryRow {
  eventSeq: number
  eventId: string
  type: string
  accountId: number
  occurredAt: number
  endpointId: number
  status: EventDeliveryStatus
  attempts: number
  nextAt: number
  lastError: string | null
  updatedAt: number
}

export interface DeliverySearch {
  from: number
  accountId: number | null
  status: EventDeliveryStatus | null
  /** Continue with events numbered below this. */
  before: number | null
  limit: number
  budget: number
}

/**
 * The started steps of workflow sends (docs/console.md#workflows) made in a
 * period, test recipients' left out, grouped by the verification's country
 * (`''`: none stored), the step's index (0: the send's own) and its channel.
 */
export interface WorkflowStepRow {
  country: string
  step: number
  channel: Channel
  /** Steps that started. */
  started: number
  /** Of them, those current (the last one started) when their verification was approved. */
  approved: number
}

/** The console's reads (http/console/, docs/console.md). */
export interface StatsReads {
  /** The workflow steps of the verifications created in [from, to), of one account or all (null). */
  workflowSteps(from: number, to: number, accountId: number | null): Promise<WorkflowStepRow[]>
  rollups(span: Span, from: number, to: number, accountId: number | null): Promise<RollupRow[]>
  refusals(from: number, to: number, accountId: number | null): Promise<RefusalRow[]>
  search(q: VerificationSearch): Promise<SearchPage>
  /** Verifications of this recipient hash in [from, to), newest first, at most `limit`, before the position `before`. */
  byRecipient(hash: Uint8Array, from: number, to: number, before: { at: number; seq: number } | null, limit: number): Promise<Verification[]>
  /** `send.blocked` events of this recipient hash in [from, to), newest first, at most `limit`. */
  refusalsByRecipient(hash: Uint8Array, from: number, to: number, limit: number): Promise<RefusedSend[]>
  timeline(seq: number, id: string): Promise<TimelineEvent[]>
  deliveries(q: DeliverySearch): Promise<{ rows: DeliveryRow[]; next: number | null }>
  /** The prefixes with most counted sends over the rollup's last 24 hours, with their approvals, at most `limit`. */
  topPrefixes(accountId: number | null, limit: number): Promise<PrefixRow[]>
}
