/**
 * The PostgreSQL schema (drizzle pg-core), table for table the same as
 * store/sqlite/schema.ts, so `otpd db copy` can move a database across. Times
 * are epoch milliseconds in `bigint`, hashes `bytea`. Where PostgreSQL differs:
 * ids are identity columns `by default` (a copy keeps SQLite's ids);
 * `verifications.seq` comes from a sequence, so nodes never wait for one
 * another's max(seq); booleans are `boolean`; and an account's balance is
 * spread over rows of `account_balances` (store/pg/balances.ts).
 */
import { sql } from 'drizzle-orm'
import { bigint, boolean, customType, index, integer, pgSequence, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core'

const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => 'bytea' })
const ms = (name: string) => bigint(name, { mode: 'number' })

export const accounts = pgTable('accounts', {
  id: integer('id').primaryKey().generatedByDefaultAsIdentity(),
  name: text('name').notNull().unique(),
  /** Generated-code length; null means the config's `codes.default_length`. */
  codeLength: integer('code_length'),
  createdAt: ms('created_at').notNull(),
  /** See store/sqlite/schema.ts `accounts`: the fraud guard's account settings (rule 1, rule 5, test recipients). */
  allowedCountries: text('allowed_countries'),
  dailyCreditLimit: integer('daily_credit_limit'),
  testRecipients: boolean('test_recipients').notNull().default(true),
  /** See store/sqlite/schema.ts `accounts`: the account's language and autofill domain (docs/messages.md). */
  locale: text('locale'),
  otpDomain: text('otp_domain'),
  customText: boolean('custom_text').notNull().default(true),
})

/**
 * An account's balance is the sum of its rows here (store/pg/balances.ts):
 * BALANCE_STRIPES rows per account, all made with the account, kept in step
 * with credit_ledger in the same transaction as every ledger row. A send
 * debits one row that no other transaction holds, so an account's sends do
 * not take turns on one row lock from their debit to their COMMIT.
 */
export const accountBalances = pgTable(
  'account_balances',
  {
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id),
    stripe: integer('stripe').notNull(),
    balance: bigint('balance', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.stripe] })],
)

export const apiKeys = pgTable(
  'api_keys',
  {
    id: integer('id').primaryKey().generatedByDefaultAsIdentity(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id),
    name: text('name').notNull().default(''),
    prefix: text('prefix').notNull(),
    keyHash: text('key_hash').notNull(),
    status: text('status', { enum: ['active', 'disabled', 'revoked'] })
      .notNull()
      .default('active'),
    createdAt: ms('created_at').notNull(),
    lastUsedAt: ms('last_used_at'),
    /** Set by `otpd keys rotate` on the key it replaces: from then on the key is refused as revoked (docs/operating.md#rotating-a-key). */
    expiresAt: ms('expires_at'),
    /** The `[hooks.NAME]` this key stands for (docs/integrations.md#how-a-hook-is-billed): no one holds its secret; null for every key an operator made. */
    hook: text('hook'),
  },
  (t) => [index('api_keys_prefix').on(t.prefix), uniqueIndex('api_keys_hash').on(t.keyHash), uniqueIndex('api_keys_hook').on(t.hook)],
)

export const creditLedger = pgTable(
  'credit_ledger',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id),
    kind: text('kind', { enum: ['grant', 'debit', 'refund'] }).notNull(),
    /** Always positive; the kind gives the sign. */
    amount: bigint('amount', { mode: 'number' }).notNull(),
    verificationId: text('verification_id'),
    note: text('note'),
    createdAt: ms('created_at').notNull(),
  },
  (t) => [
    index('credit_ledger_account').on(t.accountId, t.id),
    // Fraud guard rule 5 reads an account's send debits of the last 24 h, and whether each was refunded.
    index('credit_ledger_send_debits').on(t.accountId, t.createdAt).where(sql`${t.kind} = 'debit' AND ${t.verificationId} IS NOT NULL`),
    index('credit_ledger_refunds').on(t.verificationId).where(sql`${t.kind} = 'refund'`),
  ],
)

/** Numbers for new verifications (store/pg/verification-store.ts nextSeq). */
export const verificationsSeq = pgSequence('verifications_seq')

/** See store/sqlite/schema.ts `verifications`. */
export const verifications = pgTable(
  'verifications',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey(),
    id: text('id').notNull(),
    keyId: integer('key_id')
      .notNull()
      .references(() => apiKeys.id),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id),
    channel: text('channel', { enum: ['sms', 'email', 'voice', 'whatsapp'] }).notNull(),
    recipientHash: bytea('recipient_hash').notNull(),
    recipientMask: text('recipient_mask').notNull(),
    codeHash: bytea('code_hash').notNull(),
    testMode: text('test_mode', { enum: ['success', 'fail', 'expired'] }),
    status: text('status', { enum: ['active', 'failed', 'canceled'] })
      .notNull()
      .default('active'),
    charged: boolean('charged').notNull(),
    createdAt: ms('created_at').notNull(),
    expiresAt: ms('expires_at').notNull(),
    usedAt: ms('used_at'),
    failedAttempts: integer('failed_attempts').notNull().default(0),
    lockedUntil: ms('locked_until'),
    delivery: text('delivery', { enum: ['sending', 'accepted', 'failed', 'unknown', 'delivered', 'undelivered'] }),
    deliveryProvider: text('delivery_provider'),
    deliveryUpdatedAt: ms('delivery_updated_at'),
    smsEncoding: text('sms_encoding', { enum: ['GSM-7', 'UCS-2'] }),
    smsSegments: integer('sms_segments'),
    country: text('country'),
    fraudMonitored: text('fraud_monitored'),
    deliveryRef: text('delivery_ref'),
    deliveryLanguage: text('delivery_language'),
    deliveryErrorCode: text('delivery_error_code'),
    deliveryErrorTitle: text('delivery_error_title'),
    /** The hook whose identity server checks the code (docs/integrations.md#what-otpd-records); null when otpd checks it. */
    checkedBy: text('checked_by'),
  },
  (t) => [
    index('verifications_recipient').on(t.recipientHash, t.createdAt),
    index('verifications_expiry').on(t.expiresAt),
    index('verifications_created').on(t.createdAt),
    index('verifications_sending').on(t.createdAt).where(sql`${t.delivery} = 'sending'`),
    index('verifications_delivery_ref').on(t.deliveryRef).where(sql`${t.deliveryRef} IS NOT NULL`),
  ],
)

/** See store/sqlite/schema.ts `verificationSteps`. */
export const verificationSteps = pgTable(
  'verification_steps',
  {
    verificationSeq: bigint('verification_seq', { mode: 'number' }).notNull(),
    step: integer('step').notNull(),
    channel: text('channel', { enum: ['sms', 'email', 'voice', 'whatsapp'] }).notNull(),
    recipientMask: text('recipient_mask').notNull(),
    channelTimeout: integer('channel_timeout').notNull(),
    sealed: bytea('sealed'),
    provider: text('provider'),
    delivery: text('delivery', { enum: ['sending', 'accepted', 'failed', 'unknown', 'delivered', 'undelivered'] }),
    startedAt: bigint('started_at', { mode: 'number' }),
    endedAt: bigint('ended_at', { mode: 'number' }),
    endReason: text('end_reason'),
    dueAt: bigint('due_at', { mode: 'number' }),
  },
  (t) => [primaryKey({ columns: [t.verificationSeq, t.step] }), index('verification_steps_due').on(t.dueAt).where(sql`${t.dueAt} IS NOT NULL`)],
)

/** See store/sqlite/schema.ts `verificationLegacyIds` (only a copied SQLite database has rows here). */
export const verificationLegacyIds = pgTable(
  'verification_legacy_ids',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey(),
    id: text('id').notNull(),
  },
  (t) => [uniqueIndex('verification_legacy_ids_id').on(t.id)],
)

/** See store/sqlite/schema.ts `keyHits`: a key's hits numbered 1, 2, 3... */
export const keyHits = pgTable(
  'key_hits',
  {
    keyId: integer('key_id').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull().default(0),
    at: ms('at').notNull(),
  },
  (t) => [uniqueIndex('key_hits_key_seq').on(t.keyId, t.seq), index('key_hits_at').on(t.at)],
)

/** See store/sqlite/schema.ts `recipientFailures`. */
export const recipientFailures = pgTable(
  'recipient_failures',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    recipientHash: bytea('recipient_hash').notNull(),
    at: ms('at').notNull(),
  },
  (t) => [index('recipient_failures_lookup').on(t.recipientHash, t.at), index('recipient_failures_at').on(t.at)],
)

/** See store/sqlite/schema.ts `settings` (the secret's fingerprint). */
export const settings = pgTable('settings', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
})

/**
 * See store/sqlite/schema.ts `webhookEndpoints` (docs/api.md#events):
 * secrets sealed, `events` null or `,type,type,`.
 */
export const webhookEndpoints = pgTable('webhook_endpoints', {
  id: integer('id').primaryKey().generatedByDefaultAsIdentity(),
  accountId: integer('account_id')
    .notNull()
    .references(() => accounts.id),
  url: text('url').notNull(),
  events: text('events'),
  secret: bytea('secret').notNull(),
  prevSecret: bytea('prev_secret'),
  rotatedAt: ms('rotated_at'),
  createdAt: ms('created_at').notNull(),
  failures: integer('failures').notNull().default(0),
  pausedUntil: ms('paused_until'),
  pauseMs: integer('pause_ms').notNull().default(0),
})

/**
 * See store/sqlite/schema.ts `events`. `sequence` is read under the
 * verification's row lock (store/pg/event-store.ts), so it is exact across
 * nodes; the unique index is the second line.
 */
export const events = pgTable(
  'events',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    id: text('id').notNull(),
    accountId: integer('account_id').notNull(),
    type: text('type').notNull(),
    verificationId: text('verification_id'),
    sequence: integer('sequence').notNull(),
    occurredAt: ms('occurred_at').notNull(),
    body: text('body').notNull(),
    /** See store/sqlite/schema.ts `events`. */
    recipientHash: bytea('recipient_hash'),
  },
  (t) => [
    uniqueIndex('events_id').on(t.id),
    uniqueIndex('events_verification').on(t.verificationId, t.sequence).where(sql`${t.verificationId} IS NOT NULL`),
    index('events_account').on(t.accountId, t.seq),
    index('events_recipient').on(t.recipientHash, t.occurredAt).where(sql`${t.recipientHash} IS NOT NULL`),
  ],
)

/** See store/sqlite/schema.ts `eventDeliveries`: one sender at a time by its lease (store/pg/webhook-store.ts claim). */
export const eventDeliveries = pgTable(
  'event_deliveries',
  {
    eventSeq: bigint('event_seq', { mode: 'number' }).notNull(),
    endpointId: integer('endpoint_id').notNull(),
    status: text('status', { enum: ['pending', 'delivered', 'failed'] }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    firstAt: ms('first_at').notNull(),
    nextAt: ms('next_at').notNull(),
    leaseUntil: ms('lease_until'),
    leaseOwner: text('lease_owner'),
    lastError: text('last_error'),
    updatedAt: ms('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('event_deliveries_key').on(t.eventSeq, t.endpointId),
    index('event_deliveries_endpoint_due').on(t.endpointId, t.nextAt).where(sql`${t.status} = 'pending'`),
    index('event_deliveries_leased').on(t.endpointId, t.leaseUntil).where(sql`${t.leaseUntil} IS NOT NULL`),
    index('event_deliveries_status').on(t.status, t.eventSeq),
  ],
)

/** See store/sqlite/schema.ts `idempotencyKeys` (docs/api.md#idempotency-keys). */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    keyId: integer('key_id').notNull(),
    method: text('method').notNull(),
    path: text('path').notNull(),
    idempotencyKey: text('idempotency_key').notNull(),
    fingerprint: bytea('fingerprint').notNull(),
    state: text('state', { enum: ['running', 'done'] }).notNull(),
    status: integer('status').notNull(),
    body: text('body').notNull(),
    verificationSeq: bigint('verification_seq', { mode: 'number' }),
    createdAt: ms('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('idempotency_keys_scope').on(t.keyId, t.method, t.path, t.idempotencyKey),
    index('idempotency_keys_created').on(t.createdAt),
    index('idempotency_keys_running').on(t.verificationSeq).where(sql`${t.state} = 'running'`),
  ],
)

/**
 * The fraud guard (docs/api.md#fraud-guard): see store/sqlite/schema.ts
 * `fraudSends`, `fraudMinutes`, `fraudCountries` and `fraudBlocks`. Its rules
 * are decided under advisory locks of their subjects (store/pg/fraud-store.ts).
 */
export const fraudSends = pgTable(
  'fraud_sends',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey(),
    accountId: integer('account_id').notNull(),
    at: ms('at').notNull(),
    country: text('country').notNull(),
    prefix: text('prefix').notNull(),
    ipHash: bytea('ip_hash'),
    counted: boolean('counted').notNull(),
    approvedAt: ms('approved_at'),
  },
  (t) => [
    index('fraud_sends_country').on(t.accountId, t.country, t.at).where(sql`${t.counted}`),
    index('fraud_sends_prefix').on(t.accountId, t.prefix, t.at).where(sql`${t.counted}`),
    index('fraud_sends_ip').on(t.ipHash, t.at).where(sql`${t.counted} AND ${t.ipHash} IS NOT NULL`),
    index('fraud_sends_at').on(t.at),
  ],
)

export const fraudMinutes = pgTable(
  'fraud_minutes',
  {
    accountId: integer('account_id').notNull(),
    kind: text('kind', { enum: ['prefix', 'country'] }).notNull(),
    scope: text('scope').notNull(),
    minute: bigint('minute', { mode: 'number' }).notNull(),
    sends: integer('sends').notNull().default(0),
    approved: integer('approved').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.kind, t.scope, t.minute] }), index('fraud_minutes_minute').on(t.minute)],
)

export const fraudCountries = pgTable(
  'fraud_countries',
  {
    accountId: integer('account_id').notNull(),
    country: text('country').notNull(),
    lastApprovedAt: ms('last_approved_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.country] })],
)

export const fraudBlocks = pgTable(
  'fraud_blocks',
  {
    accountId: integer('account_id').notNull(),
    kind: text('kind', { enum: ['prefix', 'country'] }).notNull(),
    scope: text('scope').notNull(),
    startedAt: ms('started_at'),
    until: ms('until'),
    level: integer('level').notNull().default(0),
    countsFrom: ms('counts_from').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.kind, t.scope] })],
)

/** See store/sqlite/schema.ts `operators`. */
export const operators = pgTable('operators', {
  id: integer('id').primaryKey().generatedByDefaultAsIdentity(),
  name: text('name').notNull().unique(),
  passwordHash: text('password_hash').notNull(),
  status: text('status', { enum: ['active', 'disabled'] })
    .notNull()
    .default('active'),
  createdAt: ms('created_at').notNull(),
  passwordChangedAt: ms('password_changed_at').notNull(),
  /** See store/sqlite/schema.ts `operators`. */
  role: text('role', { enum: ['viewer', 'admin'] })
    .notNull()
    .default('admin'),
  credentialGeneration: integer('credential_generation').notNull().default(0),
})

/** See store/sqlite/schema.ts `consoleSessions`. */
export const consoleSessions = pgTable(
  'console_sessions',
  {
    tokenHash: bytea('token_hash').primaryKey(),
    operatorId: integer('operator_id')
      .notNull()
      .references(() => operators.id),
    createdAt: ms('created_at').notNull(),
    lastSeenAt: ms('last_seen_at').notNull(),
    credentialGeneration: integer('credential_generation').notNull().default(0),
  },
  (t) => [index('console_sessions_operator').on(t.operatorId), index('console_sessions_seen').on(t.lastSeenAt)],
)

/** See store/sqlite/schema.ts `consoleSignInAttempts`; a scope's window is read under its advisory lock (store/pg/operator-store.ts). */
export const consoleSignInAttempts = pgTable(
  'console_sign_in_attempts',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    scope: bytea('scope').notNull(),
    at: ms('at').notNull(),
  },
  (t) => [index('console_sign_in_attempts_scope').on(t.scope, t.at), index('console_sign_in_attempts_at').on(t.at)],
)

/** See store/sqlite/schema.ts `auditLog`. */
export const auditLog = pgTable(
  'audit_log',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    at: ms('at').notNull(),
    operator: text('operator').notNull(),
    source: text('source', { enum: ['console', 'cli'] }).notNull(),
    action: text('action').notNull(),
    subject: text('subject').notNull(),
    details: text('details').notNull(),
  },
  (t) => [index('audit_log_at').on(t.at)],
)

/** See store/sqlite/schema.ts `consoleRollups`: the console's rollups, recounted in the background. */
export const consoleRollups = pgTable(
  'console_rollups',
  {
    span: integer('span').notNull(),
    at: ms('at').notNull(),
    accountId: integer('account_id').notNull(),
    channel: text('channel').notNull(),
    country: text('country').notNull(),
    provider: text('provider').notNull(),
    sends: integer('sends').notNull(),
    accepted: integer('accepted').notNull(),
    delivered: integer('delivered').notNull(),
    undelivered: integer('undelivered').notNull(),
    failed: integer('failed').notNull(),
    refunded: integer('refunded').notNull(),
    approved: integer('approved').notNull(),
    monitored: integer('monitored').notNull(),
    /** Sends whose code an identity server checks (a hook's: docs/integrations.md#what-otpd-records), left out of the conversion. */
    checked: integer('checked').notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.span, t.at, t.accountId, t.channel, t.country, t.provider] }),
    index('console_rollups_account').on(t.accountId, t.span, t.at),
  ],
)

/** See store/sqlite/schema.ts `consoleRefusals`. */
export const consoleRefusals = pgTable(
  'console_refusals',
  {
    minute: ms('minute').notNull(),
    accountId: integer('account_id').notNull(),
    rule: text('rule').notNull(),
    country: text('country').notNull(),
    refusals: integer('refusals').notNull(),
  },
  (t) => [primaryKey({ columns: [t.minute, t.accountId, t.rule, t.country] })],
)

/** See store/sqlite/schema.ts `consoleGaps`: on PostgreSQL, numbers drawn from a sequence commit out of order. */
export const consoleGaps = pgTable(
  'console_gaps',
  {
    source: text('source').notNull(),
    seq: ms('seq').notNull(),
    seenAt: ms('seen_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.source, t.seq] })],
)

/** See store/sqlite/schema.ts `consolePrefixHours` and `consolePrefixes`. */
export const consolePrefixHours = pgTable(
  'console_prefix_hours',
  {
    hour: ms('hour').notNull(),
    accountId: integer('account_id').notNull(),
    prefix: text('prefix').notNull(),
    sends: integer('sends').notNull(),
    approved: integer('approved').notNull(),
  },
  (t) => [primaryKey({ columns: [t.hour, t.accountId, t.prefix] })],
)

export const consolePrefixes = pgTable(
  'console_prefixes',
  {
    accountId: integer('account_id').notNull(),
    prefix: text('prefix').notNull(),
    sends: integer('sends').notNull(),
    approved: integer('approved').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.prefix] }),
    index('console_prefixes_sends').on(t.sends),
    index('console_prefixes_account').on(t.accountId, t.sends),
  ],
)

export const schema = {
  accounts,
  apiKeys,
  creditLedger,
  verifications,
  verificationLegacyIds,
  verificationSteps,
  keyHits,
  recipientFailures,
  settings,
  verificationsSeq,
  webhookEndpoints,
  events,
  eventDeliveries,
  idempotencyKeys,
  fraudSends,
  fraudMinutes,
  fraudCountries,
  fraudBlocks,
  operators,
  consoleSessions,
  consoleSignInAttempts,
  auditLog,
  consoleRollups,
  consoleRefusals,
  consoleGaps,
  consolePrefixHours,
  consolePrefixes,
}
