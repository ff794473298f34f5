/**
 * Database schema (drizzle). Times are integer milliseconds since the epoch.
 * Nothing secret is stored in clear: keys, codes and recipients are HMACs
 * (see lib/secrets.ts); only a key's display prefix and a masked recipient are
 * kept readable, for operators.
 */
import { sql } from 'drizzle-orm'
import { blob, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

export const accounts = sqliteTable('accounts', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull().unique(),
  /** Generated-code length; null means the config's `codes.default_length`. */
  codeLength: integer('code_length'),
  /** Kept in step with credit_ledger in the same transaction as every ledger row. */
  balance: integer('balance').notNull().default(0),
  createdAt: integer('created_at').notNull(),
  /** Fraud guard rule 1: `*` or `US,CA`; null means the config's `fraud.allowed_countries`. */
  allowedCountries: text('allowed_countries'),
  /** Fraud guard rule 5: at most this many send debits in a rolling 24 h; null = no cap. */
  dailyCreditLimit: integer('daily_credit_limit'),
  /** Whether the five test recipients short-circuit (docs/api.md#test-recipients); off for production accounts. */
  testRecipients: integer('test_recipients', { mode: 'boolean' }).notNull().default(true),
  /** The account's language for texts (docs/messages.md#how-a-text-is-chosen); null: none. */
  locale: text('locale'),
  /** The WICG autofill domain of its SMS (docs/messages.md#autofill); null: the config's `messages.otp_domain`. */
  otpDomain: text('otp_domain'),
  /** Whether a send may carry its own `message` and `subject` (docs/api.md#send-request-body); off: a 400. */
  customText: integer('custom_text', { mode: 'boolean' }).notNull().default(true),
})

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id),
    name: text('name').notNull().default(''),
    prefix: text('prefix').notNull(),
    keyHash: text('key_hash').notNull(),
    status: text('status', { enum: ['active', 'disabled', 'revoked'] })
      .notNull()
      .default('active'),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at'),
    /** Set by `otpd keys rotate` on the key it replaces: from then on the key is refused as revoked (docs/operating.md#rotating-a-key). */
    expiresAt: integer('expires_at'),
    /** The `[hooks.NAME]` this key stands for (docs/integrations.md#how-a-hook-is-billed): no one holds its secret; null for every key an operator made. */
    hook: text('hook'),
  },
  (t) => [index('api_keys_prefix').on(t.prefix), uniqueIndex('api_keys_hash').on(t.keyHash), uniqueIndex('api_keys_hook').on(t.hook)],
)

export const creditLedger = sqliteTable(
  'credit_ledger',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id),
    kind: text('kind', { enum: ['grant', 'debit', 'refund'] }).notNull(),
    /** Always positive; the kind gives the sign. */
    amount: integer('amount').notNull(),
    verificationId: text('verification_id'),
    note: text('note'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    index('credit_ledger_account').on(t.accountId, t.id),
    // Fraud guard rule 5 reads an account's send debits of the last 24 h, and whether each was refunded.
    index('credit_ledger_send_debits').on(t.accountId, t.createdAt).where(sql`${t.kind} = 'debit' AND ${t.verificationId} IS NOT NULL`),
    index('credit_ledger_refunds').on(t.verificationId).where(sql`${t.kind} = 'refund'`),
  ],
)

/**
 * Rows are numbered (`seq`, the rowid), and a verification's id carries its
 * number (lib/verification-id.ts): verify finds the row by that integer key,
 * and no index of random ids is kept, whose inserts at random places cost a
 * page write each. Hashes are bytes: the code's HMAC whole,
 * the recipient's cut to 16 bytes (keyed by account, so it alone names the
 * subject of the per-recipient limits).
 */
export const verifications = sqliteTable(
  'verifications',
  {
    seq: integer('seq').primaryKey(),
    id: text('id').notNull(),
    keyId: integer('key_id')
      .notNull()
      .references(() => apiKeys.id),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id),
    channel: text('channel', { enum: ['sms', 'email', 'voice', 'whatsapp'] }).notNull(),
    recipientHash: blob('recipient_hash', { mode: 'buffer' }).notNull(),
    recipientMask: text('recipient_mask').notNull(),
    codeHash: blob('code_hash', { mode: 'buffer' }).notNull(),
    /** Test recipient behaviour, or null for a real send. */
    testMode: text('test_mode', { enum: ['success', 'fail', 'expired'] }),
    /** `failed` = delivery failed and the credit was refunded; `canceled` = withdrawn by the client. Verify answers 404 to both. */
    status: text('status', { enum: ['active', 'failed', 'canceled'] })
      .notNull()
      .default('active'),
    /** Whether a credit was debited for this send (false for test recipients). */
    charged: integer('charged', { mode: 'boolean' }).notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    usedAt: integer('used_at'),
    failedAttempts: integer('failed_attempts').notNull().default(0),
    lockedUntil: integer('locked_until'),
    /** otp/types.ts DeliveryState; null for test recipients. */
    delivery: text('delivery', { enum: ['sending', 'accepted', 'failed', 'unknown', 'delivered', 'undelivered'] }),
    deliveryProvider: text('delivery_provider'),
    deliveryUpdatedAt: integer('delivery_updated_at'),
    /** An SMS as sent (docs/messages.md#encoding-and-segments): `GSM-7` or `UCS-2`, and its segments; null for other channels. */
    smsEncoding: text('sms_encoding', { enum: ['GSM-7', 'UCS-2'] }),
    smsSegments: integer('sms_segments'),
    /** The destination's country for sms and voice (ISO 3166-1 alpha-2, `ZZ` unknown), as the fraud guard placed it; null for email and test recipients. */
    country: text('country'),
    /** The fraud guard rule that monitor mode let this send through in spite of (docs/fraud-guard.md); null otherwise. */
    fraudMonitored: text('fraud_monitored'),
    /** The vendor's id of the message (Meta's `wamid.…`, Vonage's message UUID): receipts that name only it find the row by it (docs/delivery.md#delivery-receipts). */
    deliveryRef: text('delivery_ref'),
    /** The template language a WhatsApp provider used (docs/delivery.md#whatsapp); null otherwise. */
    deliveryLanguage: text('delivery_language'),
    /** The vendor's error code and title of an `undelivered` receipt, as the vendor gave them (never a digit of the number). */
    deliveryErrorCode: text('delivery_error_code'),
    deliveryErrorTitle: text('delivery_error_title'),
    /** The hook whose identity server checks the code (docs/integrations.md#what-otpd-records); null when otpd checks it. */
    checkedBy: text('checked_by'),
  },
  (t) => [
    index('verifications_recipient').on(t.recipientHash, t.createdAt),
    index('verifications_expiry').on(t.expiresAt),
    // The console's rollups recount an hour, and its search walks a period, along it (docs/console.md#performance).
    index('verifications_created').on(t.createdAt),
    // Only sends whose outcome is not yet recorded: a few rows at any time, for recovery.
    index('verifications_sending').on(t.createdAt).where(sql`${t.delivery} = 'sending'`),
    // Only sends whose vendor gave an id: receipts by message id.
    index('verifications_delivery_ref').on(t.deliveryRef).where(sql`${t.deliveryRef} IS NOT NULL`),
  ],
)

/**
 * Ids of verifications created before ids carried row numbers (migration
 * 0002): verify looks an id up here when it names no row, and takes the row
 * only if it still has that id. The retention sweep drops them once every
 * verification of that age is gone.
 */
export const verificationLegacyIds = sqliteTable(
  'verification_legacy_ids',
  {
    seq: integer('seq').primaryKey(),
    id: text('id').notNull(),
  },
  (t) => [uniqueIndex('verification_legacy_ids_id').on(t.id)],
)

/**
 * The steps of a verification sent with a workflow (docs/api.md#workflows),
 * one row each. `sealed` holds what a step not yet started delivers (its
 * recipient, the code, the send's text options), AES-256-GCM under a key
 * derived from the server secret (lib/secret-box.ts); it is dropped once the
 * step starts. `due_at`: when the step starts unless a correct code comes
 * first. The current step's delivery is the verification's own; a step that
 * ended keeps its provider and delivery here.
 */
export const verificationSteps = sqliteTable(
  'verification_steps',
  {
    verificationSeq: integer('verification_seq').notNull(),
    step: integer('step').notNull(),
    channel: text('channel', { enum: ['sms', 'email', 'voice', 'whatsapp'] }).notNull(),
    recipientMask: text('recipient_mask').notNull(),
    /** The workflow's `channel_timeout`, in seconds. */
    channelTimeout: integer('channel_timeout').notNull(),
    sealed: blob('sealed', { mode: 'buffer' }),
    provider: text('provider'),
    delivery: text('delivery', { enum: ['sending', 'accepted', 'failed', 'unknown', 'delivered', 'undelivered'] }),
    startedAt: integer('started_at'),
    endedAt: integer('ended_at'),
    endReason: text('end_reason'),
    dueAt: integer('due_at'),
  },
  (t) => [
    primaryKey({ columns: [t.verificationSeq, t.step] }),
    // Only steps waiting for their time: a few rows, which the nodes claim when due.
    index('verification_steps_due').on(t.dueAt).where(sql`${t.dueAt} IS NOT NULL`),
  ],
)

/**
 * One row per admitted authenticated request: the per-key rolling window.
 * `seq` numbers a key's hits 1, 2, 3... in admission order, so the n-th most
 * recent hit is one index look-up whatever the limit (otp/key-limiter.ts).
 */
export const keyHits = sqliteTable(
  'key_hits',
  {
    keyId: integer('key_id').notNull(),
    seq: integer('seq').notNull().default(0),
    at: integer('at').notNull(),
  },
  (t) => [uniqueIndex('key_hits_key_seq').on(t.keyId, t.seq)],
)

/**
 * One row per failed verify attempt, per recipient (docs/api.md#hardening).
 * The recipient hash is keyed by account too, so it alone is the subject.
 */
export const recipientFailures = sqliteTable(
  'recipient_failures',
  {
    recipientHash: blob('recipient_hash', { mode: 'buffer' }).notNull(),
    at: integer('at').notNull(),
  },
  (t) => [index('recipient_failures_lookup').on(t.recipientHash, t.at)],
)

/**
 * Facts about the database itself, by name (store/sqlite/start-checks.ts). `secret_fingerprint`
 * is an HMAC of a fixed label under the server secret: it tells whether the
 * secret loaded at start is the one the stored hashes were made with, and
 * reveals nothing of the secret (see start-checks.ts).
 */
export const settings = sqliteTable('settings', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
})

/**
 * Outgoing webhook endpoints (docs/api.md#events). `events` is null (every
 * type) or a list written `,type,type,` so one `instr` matches a type. Secrets
 * are AES-256-GCM ciphertexts (lib/secret-box.ts) under a key derived from the
 * server secret: the database alone does not give them away. `prev_secret`
 * is the secret before the last rotation, still signed with until
 * `rotated_at` + 24 h. `failures` counts the endpoint's failed tries in a
 * row, and an endpoint that keeps failing is paused until `paused_until`,
 * for `pause_ms` (docs/events.md#fair-turns-and-slow-endpoints).
 */
export const webhookEndpoints = sqliteTable('webhook_endpoints', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  accountId: integer('account_id')
    .notNull()
    .references(() => accounts.id),
  url: text('url').notNull(),
  events: text('events'),
  secret: blob('secret', { mode: 'buffer' }).notNull(),
  prevSecret: blob('prev_secret', { mode: 'buffer' }),
  rotatedAt: integer('rotated_at'),
  createdAt: integer('created_at').notNull(),
  failures: integer('failures').notNull().default(0),
  pausedUntil: integer('paused_until'),
  pauseMs: integer('pause_ms').notNull().default(0),
})

/**
 * The event outbox: one row per event, written in the transaction of the
 * change it reports. `body` is the exact JSON POSTed (a replay sends it
 * again, id included). `sequence` numbers one verification's events from 1.
 * An id names its row (`seq`, lib/verification-id.ts): no index of ids.
 */
export const events = sqliteTable(
  'events',
  {
    seq: integer('seq').primaryKey(),
    id: text('id').notNull(),
    accountId: integer('account_id').notNull(),
    type: text('type').notNull(),
    /** Null for `send.blocked`. */
    verificationId: text('verification_id'),
    /**
     * The verification's row number, first in the index of look-ups by
     * verification: rising with time, that index grows at its end, where one
     * led by the random text of `verification_id` cost each insert a read and
     * a write of a page anywhere in it (docs/benchmarks.md#where-a-requests-time-goes). The
     * id follows it there: a number is given again once every verification
     * up to it is swept, and their events may stay (a delivery pending).
     */
    verificationSeq: integer('verification_seq'),
    sequence: integer('sequence').notNull(),
    occurredAt: integer('occurred_at').notNull(),
    body: text('body').notNull(),
    /**
     * `send.blocked` only: the refused recipient's keyed hash, as a
     * verification keeps it, so the console's search by full number finds
     * refusals too (docs/console.md#verifications). Null, and out of the
     * partial index, for every other event.
     */
    recipientHash: blob('recipient_hash', { mode: 'buffer' }),
  },
  (t) => [
    index('events_verification_seq').on(t.verificationSeq, t.verificationId, t.sequence),
    index('events_account').on(t.accountId, t.seq),
    index('events_recipient').on(t.recipientHash, t.occurredAt).where(sql`${t.recipientHash} IS NOT NULL`),
  ],
)

/**
 * Events from before their ids named their row (lib/verification-id.ts, as
 * verification ids do): `events show` and `events replay` still find them by
 * id. Events have no index of their ids.
 */
export const eventLegacyIds = sqliteTable('event_legacy_ids', {
  id: text('id').primaryKey(),
  seq: integer('seq').notNull(),
})

/**
 * One row per (event, endpoint it goes to): where that delivery stands.
 * `lease_until` and `lease_owner` are set in a write transaction by the
 * process that sends it now (events/dispatcher.ts): another process skips it
 * until the lease ends, so one sender at a time, and a sender killed mid-way
 * leaves a lease that simply runs out (at least once).
 */
export const eventDeliveries = sqliteTable(
  'event_deliveries',
  {
    eventSeq: integer('event_seq').notNull(),
    endpointId: integer('endpoint_id').notNull(),
    status: text('status', { enum: ['pending', 'delivered', 'failed'] }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    /** When the current round of tries began (the event, or its replay): tries stop 24 h later. */
    firstAt: integer('first_at').notNull(),
    nextAt: integer('next_at').notNull(),
    leaseUntil: integer('lease_until'),
    leaseOwner: text('lease_owner'),
    lastError: text('last_error'),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('event_deliveries_key').on(t.eventSeq, t.endpointId),
    // The claim takes each endpoint's due deliveries in turn, and counts its leases.
    index('event_deliveries_endpoint_due').on(t.endpointId, t.nextAt).where(sql`${t.status} = 'pending'`),
    index('event_deliveries_leased').on(t.endpointId, t.leaseUntil).where(sql`${t.leaseUntil} IS NOT NULL`),
    // `otpd events list --status pending|failed` and `replay --failed` start from here.
    index('event_deliveries_status').on(t.status, t.eventSeq),
  ],
)

/**
 * Idempotency-Key records (docs/api.md#idempotency-keys, otp/idempotency.ts): one
 * per API key, method, path and key, taken in the operation's write transaction.
 * The body is kept as a keyed hash only; the stored answer holds no secret. A
 * `running` record belongs to the send `verification_seq`, whose settlement
 * makes it `done`; swept `idempotency.retention_hours` after `created_at`.
 */
export const idempotencyKeys = sqliteTable(
  'idempotency_keys',
  {
    keyId: integer('key_id').notNull(),
    method: text('method').notNull(),
    path: text('path').notNull(),
    idempotencyKey: text('idempotency_key').notNull(),
    fingerprint: blob('fingerprint', { mode: 'buffer' }).notNull(),
    state: text('state', { enum: ['running', 'done'] }).notNull(),
    status: integer('status').notNull(),
    body: text('body').notNull(),
    verificationSeq: integer('verification_seq'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('idempotency_keys_scope').on(t.keyId, t.method, t.path, t.idempotencyKey),
    index('idempotency_keys_created').on(t.createdAt),
    // Only records of sends whose delivery is under way: a few rows at any time.
    index('idempotency_keys_running').on(t.verificationSeq).where(sql`${t.state} = 'running'`),
  ],
)

/**
 * Fraud guard (docs/api.md#fraud-guard): one row per accepted sms/voice send
 * to a real recipient, the subject of rules 2-4. `counted` is 0 for a send
 * that monitor mode let through although a rule would have refused it: it
 * counts toward no rule, so monitor decides exactly as enforce would.
 * `ip_hash` is an HMAC of the canonical address (keyed by account), never the
 * address; `prefix` is the prefix's counting key (otp/fraud.ts prefixKey: an
 * HMAC, or the country of a short number), never the prefix, which beside the
 * verification's mask would give all of the number but one digit. Rows older
 * than 24 h are swept.
 */
export const fraudSends = sqliteTable(
  'fraud_sends',
  {
    seq: integer('seq').primaryKey(),
    accountId: integer('account_id').notNull(),
    at: integer('at').notNull(),
    country: text('country').notNull(),
    prefix: text('prefix').notNull(),
    ipHash: blob('ip_hash', { mode: 'buffer' }),
    counted: integer('counted', { mode: 'boolean' }).notNull(),
    approvedAt: integer('approved_at'),
  },
  (t) => [
    index('fraud_sends_country').on(t.accountId, t.country, t.at).where(sql`${t.counted} = 1`),
    index('fraud_sends_prefix').on(t.accountId, t.prefix, t.at).where(sql`${t.counted} = 1`),
    index('fraud_sends_ip').on(t.ipHash, t.at).where(sql`${t.counted} = 1 AND ${t.ipHash} IS NOT NULL`),
    index('fraud_sends_at').on(t.at),
  ],
)

/**
 * Rule 4's counts per account, scope and minute of the send: counted sends,
 * and how many of them were approved. A 24 h window is then at most 1,440 rows
 * per scope, whatever the traffic; the partial minutes at its ends are read
 * from fraud_sends, so the window is exact to the millisecond. A prefix's
 * `scope` is its counting key, as in fraud_sends.
 */
export const fraudMinutes = sqliteTable(
  'fraud_minutes',
  {
    accountId: integer('account_id').notNull(),
    kind: text('kind', { enum: ['prefix', 'country'] }).notNull(),
    scope: text('scope').notNull(),
    minute: integer('minute').notNull(),
    sends: integer('sends').notNull().default(0),
    approved: integer('approved').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.kind, t.scope, t.minute] }), index('fraud_minutes_minute').on(t.minute)],
)

/** Per account and country, the last approved verification: rule 3 ("proven" destinations, 30 days). */
export const fraudCountries = sqliteTable(
  'fraud_countries',
  {
    accountId: integer('account_id').notNull(),
    country: text('country').notNull(),
    lastApprovedAt: integer('last_approved_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.country] })],
)

/**
 * Rule 4 blocks per account and scope (`prefix` or `country`): the current or
 * last block (`until`), its escalation `level` (0 = 15 min), and `counts_from`,
 * set by `otpd fraud unblock`: the rule counts the scope's sends from then on.
 */
export const fraudBlocks = sqliteTable(
  'fraud_blocks',
  {
    accountId: integer('account_id').notNull(),
    kind: text('kind', { enum: ['prefix', 'country'] }).notNull(),
    scope: text('scope').notNull(),
    startedAt: integer('started_at'),
    until: integer('until'),
    level: integer('level').notNull().default(0),
    countsFrom: integer('counts_from').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.kind, t.scope] })],
)

/**
 * Console operators (docs/console.md): a name and an argon2id hash of the
 * password (Bun.password); `disabled` refuses sign-in, and every session of
 * the operator is deleted with the change.
 */
export const operators = sqliteTable('operators', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull().unique(),
  passwordHash: text('password_hash').notNull(),
  status: text('status', { enum: ['active', 'disabled'] })
    .notNull()
    .default('active'),
  createdAt: integer('created_at').notNull(),
  passwordChangedAt: integer('password_changed_at').notNull(),
  /** `viewer` reads only; `admin` may change (docs/console.md#roles). */
  role: text('role', { enum: ['viewer', 'admin'] })
    .notNull()
    .default('admin'),
  /**
   * Moves on at every password reset and disable: a session made under an
   * older one is dead, even one whose sign-in checked the password before the
   * change (otp/operators.ts).
   */
  credentialGeneration: integer('credential_generation').notNull().default(0),
})

/**
 * Console sessions: only the HMAC of the cookie's token is kept (a copied
 * database opens no session). A session is alive while `last_seen_at` is
 * less than 12 h old (otp/operators.ts).
 */
export const consoleSessions = sqliteTable(
  'console_sessions',
  {
    tokenHash: blob('token_hash', { mode: 'buffer' }).primaryKey(),
    operatorId: integer('operator_id')
      .notNull()
      .references(() => operators.id),
    createdAt: integer('created_at').notNull(),
    lastSeenAt: integer('last_seen_at').notNull(),
    /** The operator's `credential_generation` when the password was checked. */
    credentialGeneration: integer('credential_generation').notNull().default(0),
  },
  (t) => [index('console_sessions_operator').on(t.operatorId), index('console_sessions_seen').on(t.lastSeenAt)],
)

/**
 * Console sign-in attempts not known to have succeeded, per scope (the HMAC
 * of an operator name or of a client address): the failed sign-in limits'
 * rolling windows. Rows older than the window are deleted as new ones come.
 */
export const consoleSignInAttempts = sqliteTable(
  'console_sign_in_attempts',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    scope: blob('scope', { mode: 'buffer' }).notNull(),
    at: integer('at').notNull(),
  },
  (t) => [index('console_sign_in_attempts_scope').on(t.scope, t.at), index('console_sign_in_attempts_at').on(t.at)],
)

/**
 * The audit log (docs/console.md#audit-log): every action taken in the
 * console or through the CLI, with who, when, what and on what. `details` is
 * a JSON object that never holds a secret. Kept for good: no sweep deletes it.
 */
export const auditLog = sqliteTable(
  'audit_log',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    at: integer('at').notNull(),
    operator: text('operator').notNull(),
    source: text('source', { enum: ['console', 'cli'] }).notNull(),
    action: text('action').notNull(),
    subject: text('subject').notNull(),
    details: text('details').notNull(),
  },
  (t) => [index('audit_log_at').on(t.at)],
)

/**
 * The console's rollups (docs/console.md#performance): per `span` (60000 a
 * minute, 3600000 an hour, 86400000 a day), bucket start `at`, account,
 * channel, country and provider (`''` for none), the counts of real sends
 * made in that bucket and where they stand. Recounted from the verifications
 * of the bucket by the background rollup (otp/rollup.ts), never written on
 * the send or verify path.
 */
export const consoleRollups = sqliteTable(
  'console_rollups',
  {
    span: integer('span').notNull(),
    at: integer('at').notNull(),
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

/** Fraud guard refusals (`send.blocked` events) per minute, account, rule and country (`''` for none), counted once each by the rollup. */
export const consoleRefusals = sqliteTable(
  'console_refusals',
  {
    minute: integer('minute').notNull(),
    accountId: integer('account_id').notNull(),
    rule: text('rule').notNull(),
    country: text('country').notNull(),
    refusals: integer('refusals').notNull(),
  },
  (t) => [primaryKey({ columns: [t.minute, t.accountId, t.rule, t.country] })],
)

/**
 * Row numbers the rollup passed that were not there yet (a transaction that
 * had drawn its number but not committed, or one rolled back): looked at
 * again until they appear or `seen_at` is old enough (otp/rollup.ts).
 */
export const consoleGaps = sqliteTable(
  'console_gaps',
  {
    source: text('source').notNull(),
    seq: integer('seq').notNull(),
    seenAt: integer('seen_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.source, t.seq] })],
)

/**
 * The fraud guard's counted sends and approvals per hour and prefix, of the
 * last 24 hours, recounted by the rollup from fraud_sends; and their sums
 * over those hours per prefix (`console_prefixes`), kept by the same
 * transactions, so the console lists the prefixes with most sends without
 * adding up a day of per-minute counters (docs/console.md#performance).
 */
export const consolePrefixHours = sqliteTable(
  'console_prefix_hours',
  {
    hour: integer('hour').notNull(),
    accountId: integer('account_id').notNull(),
    prefix: text('prefix').notNull(),
    sends: integer('sends').notNull(),
    approved: integer('approved').notNull(),
  },
  (t) => [primaryKey({ columns: [t.hour, t.accountId, t.prefix] })],
)

export const consolePrefixes = sqliteTable(
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
