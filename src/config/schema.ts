/**
 * The configuration file's schema. Every key has its default here, so an empty
 * (or absent) file is a working configuration. otp.config.example.toml
 * documents the same keys for people.
 */
import { Type as T, type Static } from '@sinclair/typebox'
import { HOOK_TYPES } from '../hooks/adapter.ts'

const strict = { additionalProperties: false, default: {} } as const
/** A DNS host name of at least two labels, as the WICG one-time-code line writes it. */
export const HOST_NAME = '^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'
const count = (def: number, max = 1_000_000_000) => T.Integer({ minimum: 1, maximum: max, default: def })

export const ServerConfig = T.Object(
  {
    listen: T.String({ default: '127.0.0.1:8080', description: 'HOST:PORT the HTTP API listens on' }),
    /** Optional: a secret of at least 32 characters; otherwise one is generated into the data directory. */
    secret: T.Optional(T.String({ minLength: 32 })),
    /** Optional: the name of an environment variable holding the secret (at least 32 characters). */
    secret_env: T.Optional(T.String({ minLength: 1 })),
    /** Optional: a file in the format of the generated `otpd.secret` (64 hex characters), e.g. a copy of a SQLite deployment's. */
    secret_file: T.Optional(T.String({ minLength: 1 })),
    /** Optional: HOST:PORT of a second, plain-HTTP listener for /metrics, /healthz and /readyz (off when absent). */
    admin_listen: T.Optional(T.String()),
    /** Host names (besides localhost, admin_listen's and any address) the admin listener answers to; others get 421 (DNS rebinding). */
    admin_allowed_hosts: T.Array(T.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.-]+$' }), { default: [] }),
    /** Optional: a token of at least 32 characters that opens /metrics on the main listener (Authorization: Bearer). */
    metrics_token: T.Optional(T.String({ minLength: 32 })),
    /** Optional: the address vendors reach this server at, such as "https://otp.example.com"; turns delivery receipts on (config/public-url.ts). */
    public_url: T.Optional(T.String({ minLength: 1 })),
    /** Optional: PEM files; with both, the main listener serves HTTPS. */
    tls: T.Optional(T.Object({ cert: T.Optional(T.String({ minLength: 1 })), key: T.Optional(T.String({ minLength: 1 })) }, { additionalProperties: false })),
  },
  strict,
)

export const DatabaseConfig = T.Object(
  {
    path: T.String({ minLength: 1, default: './data/otpd.db' }),
    synchronous: T.Union([T.Literal('FULL'), T.Literal('NORMAL')], { default: 'FULL' }),
    busy_timeout_ms: T.Integer({ minimum: 0, maximum: 600_000, default: 5000 }),
    /** Optional: postgres://user@host:5432/db selects PostgreSQL instead of the SQLite file at `path` (store/pg/). */
    url: T.Optional(T.String({ pattern: '^postgres(ql)?://', description: 'a postgres:// URL' })),
    /** Optional: the name of an environment variable holding the PostgreSQL password (else the URL's, else PGPASSWORD). */
    password_env: T.Optional(T.String({ minLength: 1 })),
    /** PostgreSQL connections per process; a request that finds them all busy waits for one. */
    pool_size: T.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  },
  strict,
)

export const LimitsConfig = T.Object(
  {
    key_requests_per_minute: count(120),
    recipient_per_minute: count(2),
    recipient_per_hour: count(15),
    recipient_per_day: count(50),
    max_failed_attempts: count(5),
    lockout_seconds: count(900, 86_400 * 365),
    recipient_failures_per_day: count(100),
  },
  strict,
)

export const CodesConfig = T.Object({ default_length: T.Integer({ minimum: 4, maximum: 10, default: 6 }) }, strict)

export const RetentionConfig = T.Object({ days: T.Integer({ minimum: 1, maximum: 36_500, default: 7 }) }, strict)

/** Idempotency-Key records (docs/api.md#idempotency-keys) are kept this long after the first request. */
export const IdempotencyConfig = T.Object({ retention_hours: T.Integer({ minimum: 1, maximum: 8_760, default: 24 }) }, strict)

/** The event delivery loop (docs/events.md#fair-turns-and-slow-endpoints); read at each pass, so a reload applies. */
export const EventsConfig = T.Object(
  {
    /** Deliveries in flight in one process, every endpoint together. */
    max_in_flight: count(256, 4096),
    /** Deliveries in flight to one endpoint, every process and node together. */
    endpoint_max_in_flight: count(64, 4096),
    /** Deliveries pending in the outbox, every endpoint together, past which sends answer 503 (docs/events.md#a-ceiling-on-queued-events). */
    max_queued: count(1_000_000, 100_000_000),
  },
  strict,
)

/** docs/configuration.md#delivery; the per-provider `max_in_flight` and `timeout_ms` are read with each provider's table (delivery/guard-settings.ts). */
export const DeliveryConfig = T.Object(
  {
    timeout_ms: T.Integer({ minimum: 100, maximum: 300_000, default: 10_000 }),
    /** Sends in flight on this node at once; past it a send answers 503 at once (docs/api.md#overload). */
    max_sends_in_flight: T.Integer({ minimum: 1, maximum: 100_000, default: 5_000 }),
    /** Consecutive failures or timeouts of one provider that open its circuit (docs/delivery.md#circuit-breaking). */
    circuit_failures: T.Integer({ minimum: 1, maximum: 1_000, default: 5 }),
    /** How long an open circuit skips its provider before one probe. */
    circuit_cooldown_ms: T.Integer({ minimum: 100, maximum: 3_600_000, default: 30_000 }),
  },
  strict,
)

export const ChannelsConfig = T.Object(
  {
    sms: T.Optional(T.Array(T.String({ minLength: 1 }), { minItems: 1 })),
    email: T.Optional(T.Array(T.String({ minLength: 1 }), { minItems: 1 })),
    voice: T.Optional(T.Array(T.String({ minLength: 1 }), { minItems: 1 })),
    whatsapp: T.Optional(T.Array(T.String({ minLength: 1 }), { minItems: 1 })),
  },
  strict,
)

/** Provider tables are checked per type by the delivery registry (delivery/registry.ts). */
export const ProvidersConfig = T.Record(T.String(), T.Record(T.String(), T.Unknown()), { default: {} })

export const LoggingConfig = T.Object(
  {
    level: T.Union([T.Literal('debug'), T.Literal('info'), T.Literal('warn'), T.Literal('error')], { default: 'info' }),
  },
  strict,
)

/** The fraud guard (docs/fraud-guard.md). */
export const FraudConfig = T.Object(
  {
    mode: T.Union([T.Literal('enforce'), T.Literal('monitor'), T.Literal('off')], { default: 'enforce' }),
    /** ISO 3166-1 alpha-2 codes (`ZZ`: numbers of no known country), or `*` for all. */
    allowed_countries: T.Array(T.String({ pattern: '^([A-Z]{2}|\\*)$', description: "a country code in capitals such as GB or US, or '*'" }), {
      minItems: 1,
      default: ['*'],
    }),
    /** The same for WhatsApp sends; `allowed_countries` when absent (docs/fraud-guard.md#whatsapp). */
    whatsapp_allowed_countries: T.Optional(
      T.Array(T.String({ pattern: '^([A-Z]{2}|\\*)$', description: "a country code in capitals such as GB or US, or '*'" }), { minItems: 1 }),
    ),
    ip_per_hour: count(10),
    new_country_per_hour: count(10),
    conversion_grace_seconds: T.Integer({ minimum: 0, maximum: 86_400, default: 600 }),
    min_sends: count(20),
    min_conversion: T.Number({ minimum: 0, maximum: 1, default: 0.2 }),
  },
  strict,
)

/** The e-mail's HTML part (docs/messages.md#email): its look; its words come from the message. Checked further by delivery/email-html.ts. */
export const MessagesEmailConfig = T.Object(
  {
    /** Optional: an https:// image shown at the top. */
    logo_url: T.Optional(
      T.String({ pattern: '^https://[^\\s"\'<>]+$', maxLength: 2000, description: 'an https:// URL without spaces, quotes or angle brackets' }),
    ),
    accent_color: T.String({ pattern: '^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$', default: '#2563eb', description: 'a colour written #rgb or #rrggbb' }),
    /** Optional: plain text under the message (HTML-escaped; line breaks kept). */
    footer: T.Optional(T.String({ minLength: 1, maxLength: 1000 })),
    /** Optional: a file holding the whole HTML part, with placeholders; replaces the built-in layout. */
    html_template: T.Optional(T.String({ minLength: 1 })),
  },
  strict,
)

/** Per-language texts of one channel: `es = "Tu código: {code}"` (docs/messages.md#templates). */
const TemplateTable = T.Record(T.String(), T.String())

/** The message a person receives (docs/messages.md). */
export const MessagesConfig = T.Object(
  {
    /** The language of a send that names none and whose account, and country (when on), decide none. */
    default_locale: T.String({ minLength: 1, default: 'en' }),
    /** Take the language from the number's country (sms, voice), after the request's and the account's. */
    locale_from_country: T.Boolean({ default: false }),
    /** Optional: a directory of `<channel>.<locale>.txt` files, read at start and on SIGHUP. */
    templates_dir: T.Optional(T.String({ minLength: 1 })),
    /** Refuse an SMS longer than this many segments: what one credit may buy (docs/messages.md#encoding-and-segments). */
    sms_max_segments: T.Integer({ minimum: 1, maximum: 255, default: 3 }),
    /** Refuse a voice call whose text is longer than this many characters (docs/messages.md#voice). */
    voice_max_characters: T.Integer({ minimum: 1, maximum: 1600, default: 300 }),
    /** Replace characters that have a GSM-7 look-alike in built-in and operator SMS texts (never in a caller's `message`). */
    transliterate: T.Boolean({ default: false }),
    /** Optional: append `@<domain> #<code>` to every SMS (WICG SMS one-time codes). */
    otp_domain: T.Optional(T.String({ pattern: HOST_NAME, description: 'a host name such as example.com (lower case, no scheme, no port)' })),
    templates: T.Object(
      { sms: T.Optional(TemplateTable), voice: T.Optional(TemplateTable), email: T.Optional(TemplateTable), subject: T.Optional(TemplateTable) },
      strict,
    ),
    email: MessagesEmailConfig,
  },
  strict,
)

/** The operator console on the admin listener (docs/console.md). */
export const ConsoleConfig = T.Object(
  {
    /** On whenever `server.admin_listen` is set, unless false. */
    enabled: T.Boolean({ default: true }),
    /** The admin listener is reached through a reverse proxy: X-Forwarded-For gives the client address, X-Forwarded-Proto https makes the cookie Secure. */
    trust_proxy: T.Boolean({ default: false }),
  },
  strict,
)

/**
 * One identity server's hook, served at POST /hooks/NAME (docs/integrations.md).
 * The type's own settings (auth0's `audience`...) sit beside these; the
 * hook's adapter checks them (hooks/check.ts).
 */
export const HookConfig = T.Object(
  {
    type: T.Union(
      HOOK_TYPES.map((x) => T.Literal(x)),
      { description: `one of: ${HOOK_TYPES.join(', ')}` },
    ),
    /** The account it bills and limits, by name. */
    account: T.String({ minLength: 1 }),
    /** The environment variable holding the secret shared with the identity server. */
    secret_env: T.Optional(T.String({ minLength: 1 })),
    /** Its own request limit per rolling minute (the per-key limit's rules); else `limits.key_requests_per_minute`. */
    requests_per_minute: T.Optional(T.Integer({ minimum: 1, maximum: 1_000_000_000 })),
    /** How long a code it delivers lives (HOOK_CODE_LIFETIME_SECONDS when absent): the verification's expiry, and the window in which a retry is dropped. */
    code_lifetime_seconds: T.Optional(T.Integer({ minimum: 60, maximum: 86_400 })),
    /** Which providers deliver its messages, in failover order, instead of `[channels]`. */
    channels: T.Optional(
      T.Object(
        { sms: T.Optional(T.Array(T.String({ minLength: 1 }), { minItems: 1 })), email: T.Optional(T.Array(T.String({ minLength: 1 }), { minItems: 1 })) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: T.Union([T.String(), T.Number(), T.Boolean()]) },
)
export type HookConfig = Static<typeof HookConfig>

/** A hook's `code_lifetime_seconds` when its table names none. */
export const HOOK_CODE_LIFETIME_SECONDS = 600

export const HooksConfig = T.Record(T.String(), HookConfig, { default: {} })

/**
 * One `[[routing]]` table (docs/delivery.md#routing-by-country): countries,
 * the workflow `channel: "auto"` means there, providers per channel in place
 * of `[channels]`, and a sender per provider. Checked further by
 * delivery/routing.ts (countries, providers).
 */
export const RouteConfig = T.Object(
  {
    countries: T.Array(T.String({ pattern: '^([A-Z]{2}|\\*)$', description: "a country code in capitals such as IN or BR, or '*' for every other" }), {
      minItems: 1,
    }),
    workflow: T.Optional(
      T.Array(T.String({ pattern: '^(sms|voice|whatsapp|email)$', description: 'a channel: sms, voice, whatsapp' }), { minItems: 1, maxItems: 3 }),
    ),
    channel_timeout: T.Optional(T.Integer({ minimum: 15, maximum: 900 })),
    channels: T.Optional(ChannelsConfig),
    from: T.Optional(T.Record(T.String(), T.String({ minLength: 1 }))),
  },
  strict,
)

export const Config = T.Object(
  {
    server: ServerConfig,
    database: DatabaseConfig,
    limits: LimitsConfig,
    codes: CodesConfig,
    retention: RetentionConfig,
    idempotency: IdempotencyConfig,
    delivery: DeliveryConfig,
    events: EventsConfig,
    channels: ChannelsConfig,
    providers: ProvidersConfig,
    logging: LoggingConfig,
    fraud: FraudConfig,
    messages: MessagesConfig,
    console: ConsoleConfig,
    hooks: HooksConfig,
    routing: T.Array(RouteConfig, { default: [] }),
  },
  { additionalProperties: false },
)
export type Config = Static<typeof Config>
